"""The user's Python text: lines and positions, incremental parsing, constant evaluation."""
