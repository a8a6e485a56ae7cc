"""How supervise's tables look in Datasette: a context prompt (and a log chunk) as readable
text, a JSON column pretty-printed, a session's files as whole paths. Registered as a Datasette plugin (an entry point), so it
works with `supervise browse` and with plain `datasette` alike."""

from __future__ import annotations

import json
from pathlib import Path

from datasette import hookimpl
from markupsafe import Markup, escape

from .. import paths

TEXT = {("contexts", "prompt"), ("log_chunks", "text"), ("latest_contexts", "prompt")}
JSON = {"detail", "context", "usage", "content", "options", "argv"}
FILES = {("sessions", "cast_path"), ("sessions", "log_path")}


@hookimpl
def render_cell(value, column, table, database, datasette):
    if database != "supervise" or not isinstance(value, str):
        return None
    if (table, column) in FILES:
        return _located(value, datasette.databases.get(database))
    if (table, column) in TEXT or (table is None and column == "prompt"):
        return Markup('<pre style="white-space: pre-wrap; margin: 0">') + escape(value) + Markup("</pre>")
    if column in JSON and value[:1] in "[{":
        try:
            pretty = json.dumps(json.loads(value), indent=2, ensure_ascii=False)
        except ValueError:
            return None
        return Markup('<pre style="white-space: pre-wrap; margin: 0">') + escape(pretty) + Markup("</pre>")
    return None


def _located(stored: str, db) -> Markup | None:
    """A session's file as a whole path: where it is now, beside the database."""
    if db is None or not getattr(db, "path", None):
        return None
    return escape(paths.resolved(stored, Path(db.path).parent))
