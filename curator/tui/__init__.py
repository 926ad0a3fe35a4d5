"""The Textual app: label, review, audit and watch agreement from the keyboard."""

from pathlib import Path

STYLES = Path(__file__).resolve().parent / "styles"
"""The app's stylesheets (``.tcss``), one per screen family, loaded with ``CSS_PATH``."""
