"""Attaching to a running session over Murmur's A2A door: the SSE parser, the door client,
the stream watcher, frames to events, and the trace that fills what the stream lost."""
