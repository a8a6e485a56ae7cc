"""What supervise knows, within an agent's reach: projects, search, the brief, the MCP server.

Every session's project (its git repository, known by its root commit, wherever it is), full-text search over the recorded sessions, a
brief of what a project's last sessions knew, and the MCP server that puts these in an
agent's hands. Read-only over the store: nothing here writes a session."""
