"""Parsers for compiler stages, one module per format; each is a pure function over text."""
