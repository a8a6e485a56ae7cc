"""Rows stored before the masks were what they are now, masked again in place (a migration's
work: what the database holds is what its doors show)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .connection import batches

if TYPE_CHECKING:
    import sqlite_utils


def json_masked(value: str) -> str:
    """A stored JSON text masked as it is stored now (a text that is not JSON masked as text)."""
    import json

    from ..commandline import masked_data
    from ..redact import redact

    try:
        return json.dumps(masked_data(json.loads(value)), ensure_ascii=False)
    except ValueError:
        return redact(value)


def rows(db: sqlite_utils.Database, table: str, columns: list[str], mask: Callable[[str], str]) -> None:
    """Each text of `columns` masked, a batch of rows at a time; a row written only if it changed
    (its full-text index follows by the table's triggers)."""
    for found in batches(db.conn, table, columns):
        for rowid, *values in found:
            masked = [mask(v) if isinstance(v, str) and v else v for v in values]
            if masked != values:
                db.execute(f'update "{table}" set {", ".join(f"{c} = ?" for c in columns)} where id = ?', [*masked, rowid])
