"""The conversation record family: `writer` (the one appender of a record file), `reader`
(Murmur's newest-first reader and its cursors), `backward` (pages read from a file's end for
the browser), `catalog` (every record under `$MURMUR_HOME/conversations/`: listing, previews,
search), `export` (a record as JSON lines or Markdown) and `attachments` (images a tool wrote,
stored beside the record).
"""
