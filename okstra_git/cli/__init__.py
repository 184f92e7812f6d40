"""The typer CLI: one module per command group, each only parsing, calling a service and
formatting output."""
