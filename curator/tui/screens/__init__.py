"""One module per screen of the app, and the small modal dialogs they open."""
