"""Level 2: measured launches against the device's roofline (TL2xx)."""
