"""`supervise doctor`: is everything supervise needs here and working?

Each check is a function returning a `Check`: ok, warn (an optional part is missing or
unverified; nothing is broken) or problem (broken: `doctor` exits 1), with the fix. What a
check decides is a plain function over data (a version string against the versions the
pattern files were seen on, a Docker error's text, a directory's mode and free space); what
it looks at (running `claude --version`, opening the database, one request to the API) is
done at the edges, with short timeouts. Nothing here prints: report.py gives the text for the CLI
to print. The checks live by what they look at: machine.py, agents.py, services.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from .. import config, paths
from ..detection import patterns
from ..errors import SuperviseError
from .agents import agent
from .machine import data_dir, database, hook_script, native, pattern_files, terminal
from .report import Check
from .services import api, datasette, docker, summary_backend


def run_all(env: Mapping[str, str] | None = None) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done."""
    env = os.environ if env is None else env
    yield terminal(env)
    yield native()
    yield data_dir(paths.data_dir(env))
    yield database(paths.db_path(env))
    checks, sets = pattern_files(env)
    yield from checks
    for command in patterns.KNOWN_AGENTS:
        yield agent(command, sets, env)
    yield hook_script()
    yield summary_backend(env)
    try:
        yield api(config.load(env).summary)
    except SuperviseError:  # said by `summary`
        pass
    yield from docker()
    yield datasette()


