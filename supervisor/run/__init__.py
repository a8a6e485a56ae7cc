"""One supervised run, wired together: the supervisor process (the agent, the PTY loop) and the recorder process."""
