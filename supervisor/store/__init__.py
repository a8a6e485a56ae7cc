"""The database: sessions, their events and contexts, its migrations, and browsing it in Datasette."""
