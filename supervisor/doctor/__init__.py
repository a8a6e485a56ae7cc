"""`supervise doctor`: checks of the terminal, data directory, database, pattern files, agent CLIs, hook, summary backend, Docker and Datasette."""
