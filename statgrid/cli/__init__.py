"""The `statgrid` command: one module per command group, each only parsing, calling the library
and printing (common.py maps errors to exit codes); app.py assembles them."""
from statgrid.cli.app import app, main

__all__ = ["app", "main"]
