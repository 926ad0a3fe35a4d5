"""How results look on the terminal: errors and numbers (``cli_output``), progress bars
and reporters (``progress``), and the tables of ``curator eval`` and ``curator stats
--kind ir``. Commands and the app format through here, never by hand."""
