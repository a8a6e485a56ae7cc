"""A session's telemetry, made for the recorder when an endpoint is set: who the session is
(its agent, project, how it began), how its agent's release is asked (`--version`, once
the run's command is known, on the exporting thread), and where what was not sent is
recorded at the end (an event of the session: `telemetry_failed`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from .. import profiles, releases
from ..channel import RecorderConfig
from ..config import Settings
from ..telemetry import signals
from ..telemetry.export import SessionTelemetry


def make(
    cfg: RecorderConfig,
    settings: Settings,
    project: tuple[str | None, str | None],
    now: Callable[[], float],
    report: Callable[[str], None],
) -> SessionTelemetry | None:
    """`project`: its folder and its key."""
    if not settings.telemetry.on:
        return None
    kind = "handoff" if cfg.handoff_from else "resume" if cfg.resume_from else "new"
    session = signals.Session(
        id=cfg.session_id,
        agent=cfg.agent or "command",
        project=signals.project_name(project[0]),
        project_id=signals.project_id(project[1]),
        kind=kind,
        parent=cfg.resume_from,
        handoff_from=cfg.handoff_from,
    )
    telemetry = SessionTelemetry(settings.telemetry, session, cfg.started_wall, now, report, _release(cfg.agent), _failed(cfg, now))
    telemetry.start()
    return telemetry


def _release(agent: str | None) -> Callable[[list[str]], str | None] | None:
    if agent is None:
        return None

    def release(argv: list[str]) -> str | None:
        path = shutil.which(argv[0]) if argv else None
        return releases.release(path, profiles.get(agent), os.environ) if path else None

    return release


def _failed(cfg: RecorderConfig, now: Callable[[], float]) -> Callable[[dict], None]:
    """What was not sent, as an event of the session (`supervise show`): told after the
    recorder has closed its own connections, the session's last context made."""

    def record(detail: dict) -> None:
        from ..store.database import Event, Store, utcnow

        store = Store(Path(cfg.db_path))
        try:
            store.add_event(cfg.session_id, Event("telemetry_failed", detail, now(), utcnow()))
        finally:
            store.close()

    return record
