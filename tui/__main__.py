"""`python -m tui` runs the command line."""

from tui.commands.main import main

raise SystemExit(main())
