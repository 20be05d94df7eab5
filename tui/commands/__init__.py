"""The command line: the parser (main), and one module per command that needs more
than a few lines."""
