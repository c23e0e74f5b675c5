"""One module per recipe; each defines `RECIPE` (see ../model.py)."""
