"""supervise: run a coding agent under a PTY, record it, and keep its context across compaction."""

__version__ = "0.1.0"
