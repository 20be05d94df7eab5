"""tui.core.wasm"""
