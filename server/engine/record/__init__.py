"""Recording real launches: where the command runs, and the workspace's launch store."""
