"""`supervise doctor`: is everything supervise needs here and working?

Each check is a function returning a `Check`: ok, warn (an optional part is missing or
unverified; nothing is broken) or problem (broken: `doctor` exits 1), with the fix. What a
check decides is a plain function over data (a version string against the versions the
pattern files were seen on, a Docker error's text, a directory's mode and free space); what
it looks at (running `AGENT --version`, opening the database, one request to the API) is
done at the edges, with short timeouts. Nothing here prints: report.py gives the text for the CLI
to print. The checks live by what they look at: machine.py, agents.py, services.py, settings.py.
Each runs guarded: one that raises is a problem row, and the others still run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial

from .. import config, paths, profiles
from ..detection import patterns
from ..errors import SuperviseError
from .agents import agent
from .machine import data_dir, database, hook_script, native, pattern_files, terminal
from .report import Check
from .services import api, datasette, docker, summary_backend, telemetry
from .memory import mcp_server, meaning, search_index
from .settings import notify_command, settings

Step = Callable[[], "Check | Iterable[Check]"]


def run_all(env: Mapping[str, str] | None = None) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done; one that fails is a problem row, and
    the rest still run."""
    env = os.environ if env is None else env
    sets: dict[str, patterns.PatternSet] = {}

    def pattern_checks() -> list[Check]:
        checks, loaded = pattern_files(env)
        sets.update(loaded)  # for the agents' checks, which come after
        return checks

    def given_settings(check: Callable[[config.Settings], Check]) -> Step:
        """A check of what the settings name; none while they have an error (said once, by `config`)."""

        def step() -> list[Check]:
            try:
                loaded = config.load(env)
            except SuperviseError:
                return []
            return [check(loaded)]

        return step

    steps: list[tuple[str, Step]] = [
        ("terminal", partial(terminal, env)),
        ("native", native),
        ("data dir", lambda: data_dir(paths.data_dir(env))),
        ("database", lambda: database(paths.db_path(env))),
        ("config", partial(settings, env)),
        ("patterns", pattern_checks),
        *((name, partial(agent, name, sets, env)) for name in profiles.clis()),
        *(("hook", partial(hook_script, profiles.get(name))) for name in profiles.shipped()),
        ("search index", lambda: search_index(paths.db_path(env))),
        ("mcp", partial(mcp_server, env)),
        ("meaning", given_settings(lambda s: meaning(s.memory, paths.db_path(env)))),
        ("notify", given_settings(lambda s: notify_command(s.notify, env))),
        ("summary", given_settings(lambda s: summary_backend(env))),
        ("api", given_settings(lambda s: api(s.summary))),
        ("telemetry", given_settings(lambda s: telemetry(s.telemetry))),
        ("docker", docker),
        ("datasette", datasette),
    ]
    for name, step in steps:
        yield from guarded(name, step)


def guarded(name: str, step: Step) -> list[Check]:
    """What `step` found; if it raised, a problem row naming the exception instead of the end
    of the report (`doctor --json` always prints its list)."""
    try:
        found = step()
        return [found] if isinstance(found, Check) else list(found)
    except SuperviseError as exc:
        return [Check(name, "problem", exc.message, exc.hint)]
    except Exception as exc:
        if os.environ.get("SUPERVISE_DEBUG"):
            raise
        said = repr(exc)
        return [
            Check(
                name,
                "problem",
                f"the check itself failed: {said if len(said) <= 200 else said[:197] + '...'}",
                "rerun with SUPERVISE_DEBUG=1 for the traceback, and report it",
            )
        ]
