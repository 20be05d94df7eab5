"""Files and folders: where they go (paths, workdir), how they are read without trusting
what sits at a name (beneath, safe_read), how they are written privately (private_files), and
the files a session lays out (task.md, MURMUR.md)."""
