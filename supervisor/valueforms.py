"""The forms a setting's value takes: shown as the user wrote it, and, read in one place for
the check of the setting (configcheck.py) and for what uses it (telemetry/sdk.py), so that
what passes the check is what is sent, a URL with a host and a port, and `key=value,key=value`
as OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES write it (values percent-encoded)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from .plaintext import plain

TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header's name (RFC 9110)
ORDINALS = ("first", "second", "third")


def url_ok(text: str) -> bool:
    """An http:// or https:// URL with a host, and a port from 1 to 65535 if it names one."""
    try:
        parts = urlsplit(text)
        return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port out of range or not a number, a bracket not closed
        return False


def is_local_url(url: str | None) -> bool:
    """Whether `url` names this machine: localhost, a loopback address."""
    import ipaddress

    try:
        host = urlsplit(url or "").hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def pairs(text: str) -> dict[str, str]:
    """The pairs, decoded (what `pairs_problem` finds wrong is left out)."""
    found = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip():
            found[unquote(key.strip())] = unquote(value.strip())
    return found


def pairs_problem(text: str, headers: bool) -> str | None:
    """What is wrong in `text`, said by position (a header's value is a secret: never shown),
    or None. `headers`: each name must be an HTTP header's name, each value one line."""
    for n, part in enumerate(text.split(",")):
        which = f"the {ORDINALS[n]} pair" if n < len(ORDINALS) else f"pair {n + 1}"
        key, sep, value = part.partition("=")
        if not part.strip():
            return f"{which} is empty"
        if not sep:
            return f"{which} has no ="
        if not key.strip():
            return f"{which} has no name before ="
        if headers and not TOKEN.fullmatch(unquote(key.strip())):
            return f"{which}'s name is not a header name (letters, digits, -)"
        if headers and any(c in unquote(value) for c in "\r\n\0"):
            return f"{which}'s value holds a line break"
    return None


def shown(value: object) -> str:
    """A value as the user wrote it, short and plain."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = plain(value, newlines=False)
        return repr(text if len(text) <= 60 else text[:57] + "...")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return "a date"  # the one kind of TOML value left
