"""What each agent is doing now: its states, the watcher that records them, notifications, `supervise ps`."""
