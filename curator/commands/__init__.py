"""One module per command group of the ``curator`` CLI."""
