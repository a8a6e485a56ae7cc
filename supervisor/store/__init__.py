"""The database: sessions, their events and contexts, its migrations, projects as it knows them, and browsing it in Datasette."""
