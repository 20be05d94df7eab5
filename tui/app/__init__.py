"""The Textual app: the supervisor screen, its dialogs and widgets. Imports tui.core, never the
reverse."""
