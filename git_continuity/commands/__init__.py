"""One module per subcommand; each exposes plain functions that return an exit code."""
