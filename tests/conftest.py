import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The `supervise` a user would run: the console script installed next to this Python.
SUPERVISE = [str(Path(sys.executable).parent / "supervise")]


def pytest_sessionstart(session):
    """scripts/test runs the suite against a wheel installed in a fresh environment: make
    sure nothing is taken from the checkout instead (a file missing from the package must
    fail here, not pass because the source tree is on the path)."""
    import supervisor

    where = Path(supervisor.__file__).resolve()
    if os.environ.get("SUPERVISE_TEST_INSTALLED") and ROOT in where.parents:
        raise pytest.UsageError(f"supervisor was imported from the checkout ({where}), not from the installed wheel")
    if not Path(SUPERVISE[0]).exists():
        raise pytest.UsageError(f"no supervise next to {sys.executable}: install the package into this environment first")


# The real parts a test may need beyond Python, a PTY and the package: its marker, and what in
# its code (or its fixtures' code) says it needs it. `scripts/test --fast` leaves them out.
NEEDS = {
    "agents": ("claude_bin(", "claude_newest_bin(", "opencode_bin(", "codex_bin(", "kit.binary("),
    "docker": ("docker_client",),
    "browser": ("chromium", "Chromium("),
}


def pytest_configure(config):
    for mark, _ in NEEDS.items():
        config.addinivalue_line("markers", f"{mark}: needs a real part beyond Python and a PTY ({mark})")
    config.addinivalue_line("markers", "slow: takes more than a few seconds (floods, long sessions): not in the fast tier")


def _code(func) -> str:
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return ""


def _reach(funcs, namespace: dict) -> list:
    """`funcs` and the functions of `namespace` they call, and those they call, and so on."""
    seen, todo = [], list(funcs)
    while todo:
        func = todo.pop()
        if func in seen or not inspect.isfunction(func):
            continue
        seen.append(func)
        names = func.__code__.co_names + tuple(n for c in func.__code__.co_consts if inspect.iscode(c) for n in c.co_names)
        todo += [namespace[n] for n in names if n in namespace]
    return seen


def pytest_collection_modifyitems(config, items):
    """Mark each test with the real parts it needs, read from its code, its fixtures' and
    that of the module's functions they call."""
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        defs = [d.func for ds in (fixtures.name2fixturedefs.values() if fixtures else ()) for d in ds]
        namespace = vars(item.module) if getattr(item, "module", None) else {}
        funcs = _reach([getattr(item, "function", None), *defs], namespace)
        text = "".join(_code(f) for f in funcs) + " ".join(item.fixturenames)
        for mark, needles in NEEDS.items():
            if any(n in text for n in needles):
                item.add_marker(mark)


def require(condition: bool, reason: str) -> None:
    """Skip loudly on a developer machine that lacks a real part; under CI, fail instead."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"missing real part under CI: {reason}")
    pytest.skip(f"MISSING REAL PART: {reason}")


def which_or_skip(program: str) -> str:
    path = shutil.which(program) or (
        str(Path(sys.executable).parent / program) if (Path(sys.executable).parent / program).exists() else None
    )
    require(path is not None, f"`{program}` is not installed")
    return path


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Every test gets its own data directory."""
    h = tmp_path / "home"
    monkeypatch.setenv("SUPERVISE_HOME", str(h))
    return h


def run_cli(*args, input=None, env=None, check=False, timeout=60, cwd=None):
    """Run the real `supervise` CLI as a subprocess (stdin/stdout are pipes, not a terminal)."""
    proc = subprocess.run(
        [*SUPERVISE, *args],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"supervise {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def run_cli_unprivileged(*args, env=None):
    """`run_cli` as a user whom file modes bind. As root: `unshare --user`, a user namespace
    with no one mapped, where we still own our files but lose the power to read or write what
    their modes forbid."""
    prefix = []
    if os.geteuid() == 0:
        unshare = shutil.which("unshare")
        works = unshare is not None and subprocess.run([unshare, "--user", "true"], capture_output=True).returncode == 0
        require(works, "root ignores file modes, and `unshare --user` (util-linux, with user namespaces) is not available here")
        prefix = [unshare, "--user"]
    return subprocess.run([*prefix, *SUPERVISE, *args], capture_output=True, text=True, env=env, timeout=60)


SANDBOX_IMAGE = "supervise-sandbox-test:latest"  # built by scripts/docker-up


@pytest.fixture(scope="session")
def docker_client():
    """A real Docker engine with the small local sandbox image (scripts/docker-up)."""
    from supervisor.agent import sandbox

    try:
        client = sandbox.connect()
        client.images.get(SANDBOX_IMAGE)
    except Exception as exc:
        require(False, f"a Docker engine with the image {SANDBOX_IMAGE} (run scripts/docker-up --install): {exc}")
    return client
