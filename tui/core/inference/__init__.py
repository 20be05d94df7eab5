"""Inference drivers behind one interface: request JSON -> response JSON (spec §4.2/§4.3)."""
