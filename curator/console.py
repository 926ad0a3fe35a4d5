"""The two rich consoles every command shares: results to stdout, chatter to stderr."""

from rich.console import Console

out = Console(highlight=False, emoji=False)
err = Console(stderr=True, highlight=False, emoji=False)
