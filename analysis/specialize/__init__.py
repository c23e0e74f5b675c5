"""Launch values to compile each kernel with: recorded, read from launch sites, inferred, guessed, retried."""
