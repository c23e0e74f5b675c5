"""The state an analysis session owns: its caches (one LRU implementation) and the `Session` that holds them."""
