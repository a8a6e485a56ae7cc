"""Recording a session: the .cast file, terminal emulators, the render thread, the text log, its search index, export."""
