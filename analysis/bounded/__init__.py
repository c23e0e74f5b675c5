"""Caches bounded by the bytes they hold (issue 21, item 7): an entry count says nothing about memory when one
entry is a 20-line file's parse and the next a 50,000-line file's."""
