"""Agent profiles: one per agent, and the only modules that name one.

Everything supervise knows of an agent CLI is its pattern file and its profile module
(supervisor/profiles/NAME); the generic modules take a profile. So no other module names an
agent: not in code, strings or comments (a model id such as claude-haiku-4-5 names a model)."""

import json
import re
import tomllib
from pathlib import Path

import pytest

import supervisor
from supervisor import profiles
from supervisor.detection import patterns

PACKAGE = Path(supervisor.__file__).resolve().parent
# A model's id, not an agent: claude-haiku-4-5, claude-3-5-haiku, claude-sonnet-5-5.
MODEL_ID = re.compile(r"claude-(?:\d[\w.-]*|haiku|sonnet|opus)[\w.-]*", re.IGNORECASE)


def agent_words() -> dict[str, str]:
    """Each shipped agent CLI's names (its pattern set's name, commands and title), by agent.
    The agents that are supervise's own (the demo, its coding agent) are named by the code that is them."""
    words = {}
    for path in sorted(patterns.builtin_dir().glob("*.toml")):
        agent = tomllib.loads(path.read_text())["agent"]
        if agent["name"] not in profiles.clis():
            continue
        names = {agent["name"], agent.get("title", ""), *agent.get("commands", [])}
        for name in filter(None, names):
            words[Path(name).stem.lower()] = agent["name"]
    return words


def naming(text: str, words: dict[str, str]) -> list[str]:
    text = MODEL_ID.sub("", text)
    found = []
    for word in words:
        for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w])", text, re.IGNORECASE):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: {m.group()}")
    return found


def test_only_an_agents_profile_names_it():
    words = agent_words()
    assert {"claude", "codex", "gemini", "opencode", "aider"} <= set(words.values())
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "profiles" in path.parents:
            continue
        wrong += [f"{path.relative_to(PACKAGE.parent)} {hit}" for hit in naming(path.read_text(), words)]
    assert not wrong, "modules outside supervisor/profiles/ that name an agent:\n" + "\n".join(wrong)


def test_the_check_finds_an_agent_named_in_a_module():
    words = agent_words()
    assert naming('if agent == "claude":\n', words) == ["line 1: claude"]
    assert naming("# Codex CLI draws its input box\n", words)
    assert naming("# as Gemini CLI does", words) and naming("opencode.toml", words)
    assert naming('DEFAULT_MODEL = "claude-haiku-4-5"  # a model', words) == []


def test_every_shipped_cli_has_a_profile_and_a_pattern_file():
    sets = patterns.load_all()
    for name in profiles.clis():
        assert name in sets, f"{name} has a profile but no pattern file"
        assert profiles.get(name).name == name
    assert profiles.get("no-such-agent").name == "no-such-agent"
    assert profiles.get(None).transcript is None


def test_the_shipped_agents_are_named_as_their_profiles_say():
    """`shipped` names them by their modules, unimported: each name is its module's profile's."""
    import sys

    assert "claude" in profiles.shipped() and "continue-cli" in profiles.shipped()
    for name in profiles.shipped():
        profile = profiles.get(name)
        assert profile is sys.modules[f"supervisor.profiles.{name.replace('-', '_')}"].PROFILE
        assert profile.name == name


@pytest.mark.parametrize(
    "agent, ran, carried",
    [
        ("claude", ["claude", "-r", "old", "--model", "m"], ["claude", "--resume", "new", "--model", "m"]),
        ("codex", ["codex", "resume", "old", "-m", "m"], ["codex", "resume", "new", "-m", "m"]),
        ("gemini", ["gemini", "--resume=old", "-m", "m"], ["gemini", "--resume", "new", "-m", "m"]),
        ("pi", ["pi", "--continue", "--session", "old", "--model", "m"], ["pi", "--session", "new", "--model", "m"]),
        ("qwen", ["qwen", "-c", "--resume", "old"], ["qwen", "--resume", "new"]),
        ("kilo", ["kilo", "--session=old", "-m", "m"], ["kilo", "--session", "new", "-m", "m"]),
        ("cline", ["cline", "--id=old", "-m", "m"], ["cline", "--id", "new", "-m", "m"]),
        ("opencode", ["opencode", "-s", "old", "-m", "m"], ["opencode", "--session", "new", "-m", "m"]),
    ],
)
def test_a_resumed_agent_carries_its_own_session_on_and_no_earlier_one(agent, ran, carried):
    """The session it was run with is replaced by the one being carried on, its other arguments kept."""
    assert profiles.get(agent).resume(ran, {"id": "s1", "agent_session_id": "new"}, fresh=False).argv == carried


def test_qwen_is_given_its_hook_as_system_defaults_that_keep_the_ones_they_replace(tmp_path):
    from supervisor.profiles import qwen

    admin = tmp_path / "etc" / "system-defaults.json"
    admin.parent.mkdir()
    theirs = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo theirs"}]}
    admin.write_text(json.dumps({"$version": 4, "ui": {"theme": "x"}, "hooks": {"SessionStart": [theirs]}}))
    env = {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(admin.parent / "settings.json")}
    hooked = qwen.PROFILE.with_hook(["qwen", "-y"], tmp_path, str(tmp_path / "h.sock"), at_start=False, env=env)
    path = tmp_path / qwen.DEFAULTS_FILE
    assert hooked.argv == ["qwen", "-y"] and hooked.env["QWEN_CODE_SYSTEM_DEFAULTS_PATH"] == str(path)
    given = json.loads(hooked.files[path])
    assert given["ui"] == {"theme": "x"} and given["$version"] == 4
    assert [g["matcher"] for g in given["hooks"]["SessionStart"]] == ["startup", "compact|resume"]
    # defaults it could not carry over as they are: no door, the context is typed
    admin.write_text('{"$version": 2, "hooks": {}}')
    assert qwen.PROFILE.with_hook(["qwen"], tmp_path, "s", at_start=False, env=env) is None
    admin.write_text("{ not json")
    assert qwen.PROFILE.with_hook(["qwen"], tmp_path, "s", at_start=False, env=env) is None
    assert not qwen.PROFILE.hooks(["qwen", "--bare"])
