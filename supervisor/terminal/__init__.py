"""The user's terminal and the agent's PTY: raw mode, the copy loop, terminal modes, keys, the job shell."""
