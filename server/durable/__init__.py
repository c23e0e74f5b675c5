"""Writes that lose nothing (issue 21, item 6): every file the product writes goes through `replace_file`."""
