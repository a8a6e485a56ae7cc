"""The agent's pattern files, loaded at the start and again whenever one changes: a watch
on their folders (fswatch.py) hands the detector the new patterns (or, if a file is broken, keeps
the old ones and says why), and an event records which.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .. import fswatch
from ..detection import patterns
from ..detection.detector import Detector
from ..detection.patterns import PatternSet
from ..errors import SuperviseError

Emit = Callable[[str, float, dict, str], object]


def load(agent: str | None, files: list[Path]) -> PatternSet | None:
    if not agent:
        return None
    return patterns.select(patterns.load_all(files), agent)


class PatternWatch:
    def __init__(
        self,
        agent: str,
        files: list[Path],
        detector: Detector,
        *,
        emit: Emit,
        report: Callable[[str], None],
        now: Callable[[], float],
        fail: Callable[[str, BaseException], None],
    ):
        self.agent = agent
        self.files = files
        self.detector = detector
        self._emit = emit
        self._report = report
        self._now = now
        self._fail = fail
        self._observer = self._watch()

    def reload(self) -> None:
        """A pattern file changed (on the watcher's thread): use the new patterns, or keep the
        old ones if it is broken."""
        try:
            loaded = load(self.agent, self.files)
        except SuperviseError as exc:
            self._report(f"{exc} (kept the previous patterns)")
            self._emit("patterns_error", self._now(), {"error": exc.message}, "patterns")
            return
        self.detector.set_patterns(loaded)
        self._emit("patterns_reloaded", self._now(), {"patterns": len(loaded.patterns) if loaded else 0}, "patterns")

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()

    def _watch(self) -> fswatch.Watch | None:
        def changed(path: str, is_dir: bool, kind: str) -> None:
            if path.endswith(".toml") and not is_dir:
                self.reload()

        watch = fswatch.Watch(changed, "supervise-patterns")
        watched = set()
        for path in patterns.watched_paths(self.files):
            folder = path if path.is_dir() else path.parent
            if folder.is_dir() and folder not in watched:
                watch.add(folder)
                watched.add(folder)
        try:
            watch.start()
        except Exception as exc:
            self._fail("pattern watcher", exc)
            return None
        return watch
