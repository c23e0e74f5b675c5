"""Level 2 engine: profile jobs and measured device ceilings."""
