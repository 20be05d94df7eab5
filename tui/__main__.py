"""`python -m tui` runs the command line."""

from tui.cli import main

raise SystemExit(main())
