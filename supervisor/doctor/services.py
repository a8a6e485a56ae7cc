"""What summaries and the built-in agent use: the API, the summary backend, Docker and Datasette."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .. import config, profiles
from ..contexts.backends import messagesapi as wire, messageshttp
from ..errors import SuperviseError
from ..releases import release
from .report import REINSTALL, Check

API_TIMEOUT = 10.0


# -- the API ------------------------------------------------------------------------------------


def mask(secret: str) -> str:
    """`sk-ant-…abcd`: enough to tell keys apart, never the key."""
    prefix = "sk-ant-" if secret.startswith("sk-ant-") else ""
    return prefix + "…" + (secret[-4:] if len(secret) >= 16 else "")


def api(summary: config.Summary, timeout: float = API_TIMEOUT) -> Check:
    url = summary.base_url or "https://api.anthropic.com"
    if summary.local and not summary.has_key:
        return _local(summary, timeout)
    if not summary.has_key:
        return Check(
            "api",
            "warn",
            "no API key: summaries are made through an agent CLI's own login, or by the heuristic (see `summary`)",
            "set ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY, or api_key_env in config.toml)",
        )
    secret = summary.api_key or summary.auth_token or ""
    what = f"key {mask(secret)}" if summary.api_key else f"token {mask(secret)}"
    key_fix = "check ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY, ANTHROPIC_AUTH_TOKEN) and the base URL"
    url_fix = "check the base URL (SUPERVISE_SUMMARY_BASE_URL, ANTHROPIC_BASE_URL or base_url in config.toml) and the network"
    try:
        _models(summary, timeout)
        check = Check("api", "ok", f"{what} accepted by {url} (summaries by {summary.model})")
    except wire.Refused as exc:
        if exc.status in (401, 403):
            check = Check("api", "problem", f"{url} refused the {what} ({exc.status})", key_fix)
        elif exc.status == 404:
            check = Check("api", "warn", f"{url} answers but has no /v1/models: the {what} was not checked", url_fix)
        else:
            check = Check("api", "warn", f"{url} answered {exc.status} to the {what}: try again later", url_fix)
    except wire.TimedOut:
        check = Check("api", "problem", f"no answer from {url} in {timeout:g} s", url_fix)
    except wire.Unreachable as exc:
        check = Check("api", "problem", f"cannot reach {url}: {exc.reason}", url_fix)
    except wire.ApiError as exc:  # an answer that is not the API's
        check = Check("api", "warn", f"{url} gave an odd answer to the {what}: {exc}", url_fix)
    return replace(check, detail=check.detail.replace(secret, mask(secret))) if secret else check


def _models(summary: config.Summary, timeout: float) -> None:
    """Ask the API for one model: the cheapest request that shows the key is taken."""
    messageshttp.call(wire.endpoint(replace(summary, timeout=timeout, max_retries=0)), "/v1/models?limit=1")


def _local(summary: config.Summary, timeout: float) -> Check:
    """A model server on this machine, asked without a key: does it answer?"""
    url = summary.base_url
    local = f"local: {url}, no key needed (summaries by {summary.model}; nothing leaves this machine)"
    url_fix = "start the model server, or check the base URL (SUPERVISE_SUMMARY_BASE_URL, ANTHROPIC_BASE_URL or base_url in config.toml)"
    try:
        _models(summary, timeout)
    except wire.Refused:  # it answers; not every local server lists its models
        pass
    except wire.TimedOut:
        return Check("api", "problem", f"no answer from the local model server at {url} in {timeout:g} s", url_fix)
    except wire.Unreachable as exc:
        return Check("api", "problem", f"cannot reach the local model server at {url}: {exc.reason}", url_fix)
    except wire.ApiError as exc:
        return Check("api", "warn", f"the local model server at {url} gave an odd answer: {exc}", url_fix)
    return Check("api", "ok", local)


# -- who makes the session contexts -------------------------------------------------------------------


def summary_verdict(backend: str, chose: str, why: str, clis: Mapping[str, tuple[str | None, str | None]]) -> Check:
    """`backend`: as configured; `chose`, `why`: what it comes to for a session of no agent
    CLI (a session of one that can summarize asks its own first); `clis`: each agent CLI found
    here that is a summary backend -> (its version, None if it can summarize headless here,
    else why not)."""
    found = "; ".join(
        f"{name}{' ' + version if version else ''}: {_can_summarize(name) if problem is None else problem}"
        for name, (version, problem) in clis.items()
    )
    detail = f"{backend} → {chose} ({why})" + (f"; {found}" if found else "")
    if chose == "heuristic" and backend != "heuristic":
        return Check(
            "summary",
            "warn",
            detail + ": contexts are made by the heuristic digest, without a model",
            "set ANTHROPIC_API_KEY, or install an agent CLI that can summarize and log in ("
            + "; ".join(
                f"{p.name}: {p.summary.LOGIN}"
                for p in profiles.summarizers()
                if p.summary is not None and getattr(p.summary, "LOGIN", None)
            )
            + ")",
        )
    if chose not in ("api", "heuristic") and clis.get(chose, (None, "not found"))[1] is not None:
        return Check("summary", "warn", detail, f"install or upgrade {chose}, or choose another backend ([summary] backend in config.toml)")
    return Check("summary", "ok", detail)


def _can_summarize(name: str) -> str:
    from ..contexts.backends import choose

    # What a CLI cannot be kept from sending is said here, not hidden.
    caveat = getattr(choose.backends().get(name), "CAVEAT", None)
    return "headless structured output ok" + (f" ({caveat})" if caveat else "")


def summary_backend(env: Mapping[str, str]) -> Check:
    from ..contexts.backends import choose

    try:
        cfg = config.load(env).summary
    except SuperviseError as exc:
        return Check("summary", "problem", exc.message, exc.hint)
    clis = {}
    for name in choose.backends():
        exe = choose.executable(name, None, env)
        if exe:
            clis[name] = (release(exe, profiles.get(name), env), choose.probe(name, exe, env))
    choice = choose.resolve(cfg, None, env)
    return summary_verdict(cfg.backend, choice.backend, choice.why, clis)


# -- Docker and Datasette --------------------------------------------------------------------------


def docker_unreachable(error: str) -> Check:
    """What the Docker SDK's error says is wrong; Docker is for `supervise agent` only."""
    needed = "only `supervise agent` needs it"
    if "Permission denied" in error:
        return Check(
            "docker",
            "warn",
            f"no permission on the Docker socket ({needed})",
            "add yourself to the docker group: sudo usermod -aG docker $USER, then log in again (or use rootless Docker)",
        )
    if "No such file or directory" in error or "FileNotFoundError" in error:
        return Check(
            "docker",
            "warn",
            f"no Docker daemon socket: Docker is not installed or DOCKER_HOST is wrong ({needed})",
            "install Docker (Debian/Ubuntu: sudo apt install docker.io), or set DOCKER_HOST",
        )
    if "Connection refused" in error:
        return Check(
            "docker", "warn", f"the Docker daemon is not running ({needed})", "start it: sudo systemctl start docker (or run dockerd)"
        )
    return Check("docker", "warn", f"cannot reach the Docker daemon: {error} ({needed})", "start Docker, or set DOCKER_HOST")


def docker(timeout: float = 5.0) -> list[Check]:
    from ..agent.sandbox import DEFAULT_IMAGE

    try:
        import docker as sdk
    except ImportError:
        return [Check("docker", "problem", "the Docker SDK for Python is missing", REINSTALL)]
    try:
        client = sdk.from_env(timeout=timeout)
        client.ping()
        version = client.version().get("Version", "?")
    except sdk.errors.DockerException as exc:
        return [docker_unreachable(str(exc))]
    try:
        checks = [Check("docker", "ok", f"Docker {version} answers")]
        try:
            client.images.get(DEFAULT_IMAGE)
            checks.append(Check("image", "ok", f"the sandbox image {DEFAULT_IMAGE} is here"))
        except sdk.errors.ImageNotFound:
            checks.append(
                Check(
                    "image",
                    "warn",
                    f"the sandbox image {DEFAULT_IMAGE} is not here yet: pulled on first use",
                    f"docker pull {DEFAULT_IMAGE} (to fetch it now)",
                )
            )
        except sdk.errors.DockerException as exc:
            checks.append(Check("image", "warn", f"cannot look up {DEFAULT_IMAGE}: {exc}"))
        return checks
    finally:
        client.close()


def datasette() -> Check:
    from importlib import metadata, util

    if util.find_spec("datasette") is None:
        return Check(
            "datasette",
            "warn",
            "not installed: `supervise browse` cannot run",
            "pip install 'datasette==0.65.*' into supervise's environment (or reinstall supervise-agents)",
        )
    version = metadata.version("datasette")
    if not any(ep.name == "supervise" for ep in metadata.entry_points(group="datasette")):
        return Check("datasette", "warn", f"{version}, without supervise's plugin: prompts and JSON show raw", REINSTALL)
    return Check("datasette", "ok", f"{version} with supervise's plugin (`supervise browse`)")


def telemetry(settings: config.Telemetry, timeout: float = 2.0) -> Check:
    """OTLP export: off, or its exporter installed and the endpoint taking an empty export."""
    from importlib import metadata, util

    from ..telemetry.export import GRPC_HINT, INSTALL_HINT, where
    from ..telemetry.probe import probe

    if not settings.on:
        return Check("telemetry", "ok", "off: no OTLP endpoint set (docs/teams.md)")
    shown = where(settings)
    exporter = "opentelemetry.exporter.otlp.proto." + ("grpc" if settings.protocol == "grpc" else "http")
    if util.find_spec("opentelemetry") is None or util.find_spec("opentelemetry.sdk") is None or util.find_spec(exporter) is None:
        hint = GRPC_HINT if settings.protocol == "grpc" else INSTALL_HINT
        return Check(
            "telemetry",
            "warn",
            f"{shown} is set, but the OpenTelemetry {settings.protocol} exporter is not installed: nothing is sent",
            hint,
        )
    timeout = min(timeout, settings.timeout)
    answer = probe(settings, timeout)
    content = "with content (masked)" if settings.content else "without content"
    if answer.taken:
        return Check(
            "telemetry",
            "ok",
            f"{settings.protocol} to {shown}, {content} (OpenTelemetry SDK {metadata.version('opentelemetry-sdk')}): "
            f"an empty export was taken ({answer.said})",
        )
    return Check("telemetry", "warn", telemetry_verdict(shown, answer.said, answer.status, timeout), telemetry_fix(answer.status))


def telemetry_verdict(shown: str, said: str, status: int | None, timeout: float) -> str:
    """What the endpoint answered to an empty export, when it did not take it."""
    dropped = "sessions run, and what they send is dropped"
    if status is not None or said.startswith("gRPC"):
        return f"{shown} answered {said} to an empty export: {dropped}"
    if said.startswith("no answer"):
        return f"no answer from {shown} in {timeout:g} s to an empty export: {dropped}"
    return f"nothing answers at {shown} ({said}): {dropped}"


def telemetry_fix(status: int | None) -> str:
    if status in (401, 403):
        return "check the key the collector takes (OTEL_EXPORTER_OTLP_HEADERS, or headers in [telemetry])"
    if status in (404, 405):
        return "check the endpoint: the collector's base URL for HTTP (/v1/logs is added), or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT's full URL"
    if status is not None and status >= 500:
        return "check the collector's own log there (it took the request and failed it)"
    return "start the collector, or check OTEL_EXPORTER_OTLP_ENDPOINT (and its port: 4318 for HTTP, 4317 for gRPC)"
