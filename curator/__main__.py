"""``python -m curator`` runs the command-line interface."""

from curator.cli import main

main()
