"""One module per `tritonlens` subcommand."""
