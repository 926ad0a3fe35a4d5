"""The Textual app: label, review, audit and watch agreement from the keyboard."""
