"""`supervise doctor`: checks of the terminal, data directory, database, settings, pattern files, agent CLIs, hook, notify command, summary backend, Docker and Datasette."""
