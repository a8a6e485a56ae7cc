"""`supervise agent`: supervise's own coding agent. Every command runs in a hardened Docker
container (sandbox.py); the file tools act on the workspace with every path resolved inside
it first (tools.py)."""
