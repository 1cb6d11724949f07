"""Command-line edge: click commands that parse, call one api function and render."""
