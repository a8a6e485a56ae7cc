"""The agent's tools: their definitions for the model, and running them.

Commands run in the sandbox. The file tools act on the workspace from the host, each path
resolved inside it first: a path is relative to /workspace (or absolute under it); `..`,
absolute paths elsewhere and symlinks pointing out are refused with an error the model can
read. Content is written as bytes to a file opened without following a symlink, never
through a shell string. Output is capped as head + tail, with a marker saying how much
was cut.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from ..memory import tooldefs
from .sandbox import WORKDIR, Sandbox

OUTPUT_CAP = 10_000  # characters of a tool's output the model sees
LIST_CAP = 500  # entries of a directory listing
DEFAULT_TIMEOUT = 60.0

TOOLS: list[dict[str, Any]] = [
    {
        "name": "execute_command",
        "description": f"Run a shell command in the sandbox (cwd {WORKDIR}). Output is capped at {OUTPUT_CAP} characters (head and tail).",
        "input_schema": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command, run with sh -c."},
                "timeout": {"type": "number", "description": "Seconds before it is killed (default: the session's)."},
            },
            "required": ["command"],
        },
    },
    {
        "name": "read_file",
        "description": "Read a text file in the workspace, optionally only lines start..end (1-based, inclusive).",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "start_line": {"type": "integer"},
                "end_line": {"type": "integer"},
            },
            "required": ["path"],
        },
    },
    {
        "name": "write_file",
        "description": "Write (create or replace) a file in the workspace with the given content.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
            },
            "required": ["path", "content"],
        },
    },
    {
        "name": "recall_output",
        "description": "Get back, whole, a tool output that was pruned from the conversation to save context (its placeholder names the handle).",
        "input_schema": {"type": "object", "properties": {"handle": {"type": "integer"}}, "required": ["handle"]},
    },
    {
        "name": "list_directory",
        "description": "List a directory of the workspace (default: its top).",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
]


# supervise's memory tools (the MCP server's, run in-process), named as MCP clients prefix a server's
MEMORY_PREFIX = "supervise_"
MEMORY_TOOLS: list[dict[str, Any]] = [{"name": MEMORY_PREFIX + name, **spec} for name, spec in tooldefs.TOOLS.items()]


class ToolError(Exception):
    """A refusal or failure the model reads as the tool's (error) result."""


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters cut ...]\n{tail}"


def resolve(workspace: Path, path: str) -> Path:
    """The host path of `path` (as the model names it), or ToolError if it leads outside."""
    if not path or "\x00" in path:
        raise ToolError("no path given" if not path else "a path may not hold a NUL character")
    p = PurePosixPath(path)
    if p.is_absolute():
        try:
            p = p.relative_to(WORKDIR)
        except ValueError:
            raise ToolError(f"refused: {path} is outside {WORKDIR}") from None
    if ".." in p.parts:
        raise ToolError(f"refused: {path} uses '..'; name paths inside {WORKDIR}")
    root = os.path.realpath(workspace)
    real = os.path.realpath(os.path.join(root, *p.parts))
    if real != root and not real.startswith(root + os.sep):
        raise ToolError(f"refused: {path} leads outside {WORKDIR} (a symlink)")
    return Path(real)


def read_file(workspace: Path, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    target = resolve(workspace, path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(8 << 20)
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory; use list_directory") from None
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    if start_line or end_line:
        lines = text.splitlines(keepends=True)
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines))
        text = "".join(lines[first - 1 : last])
    return cap(text)


def write_file(workspace: Path, path: str, content: str) -> str:
    target = resolve(workspace, path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        resolve(workspace, str(target.parent.relative_to(os.path.realpath(workspace))) or ".")  # made inside, still inside
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            data = content.encode("utf-8")
            fh.write(data)
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror}") from None
    return f"wrote {len(data)} bytes to {path}"


def list_directory(workspace: Path, path: str = ".") -> str:
    target = resolve(workspace, path or ".")
    try:
        entries = sorted(os.scandir(target), key=lambda e: e.name)
    except NotADirectoryError:
        raise ToolError(f"{path} is not a directory") from None
    except OSError as exc:
        raise ToolError(f"cannot list {path}: {exc.strerror}") from None
    lines = []
    for e in entries[:LIST_CAP]:
        if e.is_symlink():
            lines.append(f"{e.name} -> {os.readlink(e.path)}")
        elif e.is_dir():
            lines.append(e.name + "/")
        else:
            lines.append(f"{e.name}  ({e.stat().st_size} bytes)")
    if len(entries) > LIST_CAP:
        lines.append(f"[... {len(entries) - LIST_CAP} more entries ...]")
    return "\n".join(lines) or "(empty)"


def execute_command(sandbox: Sandbox, command: str, timeout: float) -> tuple[str, bool]:
    """(what the model reads, whether it is an error)."""
    result = sandbox.exec(command, timeout)
    if result.timed_out:
        return cap(result.output) + f"\n[timed out after {timeout:g} s: the command was killed]", True
    return cap(result.output) + f"\n[exit code {result.exit_code}]", result.exit_code != 0


def run(sandbox: Sandbox, workspace: Path, name: str, args: dict, timeout: float = DEFAULT_TIMEOUT, memory=None) -> tuple[str, bool]:
    """Run one tool call: (result text, is_error). Never raises for the model's mistakes.
    `memory`: what the memory tools look things up in (memory.mcpserver.Memory), if given."""
    try:
        if memory is not None and name.startswith(MEMORY_PREFIX) and name[len(MEMORY_PREFIX) :] in tooldefs.TOOLS:
            text = tooldefs.call(memory, name[len(MEMORY_PREFIX) :], args)
            return text, text.startswith("supervise: ")
        if name == "execute_command":
            return execute_command(sandbox, str(args.get("command", "")), float(args.get("timeout") or timeout))
        if name == "read_file":
            return read_file(workspace, str(args.get("path", "")), args.get("start_line"), args.get("end_line")), False
        if name == "write_file":
            return write_file(workspace, str(args.get("path", "")), str(args.get("content", ""))), False
        if name == "list_directory":
            return list_directory(workspace, str(args.get("path") or ".")), False
        known = TOOLS + (MEMORY_TOOLS if memory is not None else [])
        return f"unknown tool {name!r}; the tools are: {', '.join(t['name'] for t in known)}", True
    except ToolError as exc:
        return str(exc), True
    except (TypeError, ValueError) as exc:
        return f"bad arguments for {name}: {exc}", True
