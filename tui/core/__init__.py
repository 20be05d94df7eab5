"""Everything that is not drawing. Never imports Textual or Rich (see tests/unit/test_layers.py)."""
