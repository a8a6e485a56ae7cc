"""Lookups in what supervise recorded, counted by a process of their own (`supervise mcp`,
`supervise search`) where telemetry is on: the count goes out once per export interval and
when the process ends. With telemetry off, as it is by default, nothing of the exporter is
imported (a search's start-up)."""

from __future__ import annotations

from typing import Any

from ..config import Telemetry
from ..errors import SuperviseError


class Lookups:
    """One process's lookups: counted with the tool asked, by way (cli, mcp) and project."""

    def __init__(self, settings: Telemetry, via: str, project: str | None = None):
        self.settings, self.via, self.project = settings, via, project
        self._pipeline: Any = None
        self._failed = False

    def count(self, tool: str) -> None:
        if not self.settings.on or self._failed:
            return
        try:
            if self._pipeline is None:
                from . import sdk, signals

                self._pipeline = sdk.Pipeline(self.settings, lambda: None)
                named = {"supervise.project": signals.project_name(self.project)} if self.project else {}
                self._base: dict[str, Any] = {"supervise.lookup.via": self.via, **named}
            self._pipeline.add("supervise.lookups", 1, {**self._base, "supervise.lookup.tool": tool})
        except (ImportError, SuperviseError):
            self._failed = True  # a lookup is never refused for it; the recorder says why once

    def close(self, timeout: float) -> None:
        if self._pipeline is not None:
            self._pipeline.close(timeout)
