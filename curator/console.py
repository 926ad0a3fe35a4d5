"""The two rich consoles every command shares: results to stdout, chatter to stderr."""

from rich.console import Console

out = Console(highlight=False, emoji=False)
# soft_wrap: an error or warning line stays one line in a log, however long
err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)
