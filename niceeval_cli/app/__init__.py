"""The commands' use cases: each reads or writes through the store and returns records for reports/ to render."""
