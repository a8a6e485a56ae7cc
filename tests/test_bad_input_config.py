"""A config.toml or a variable that is wrong, as a user meets it: the real CLI, a real file in
a config folder of its own. An error is one line naming the file (or the variable), the key
and what it must be, and no run starts; an unknown table or key is a warning and the run goes
on; `doctor` lists each and never crashes."""

import json
import os
import stat

import pytest

from conftest import run_cli, run_cli_unprivileged


@pytest.fixture
def cfg(tmp_path):
    """The config folder (SUPERVISE_CONFIG), empty; the user's settings variables unset."""
    folder = tmp_path / "config"
    folder.mkdir()
    return folder


def env_of(cfg, **extra):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            (
                "SUPERVISE_SUMMARY_",
                "SUPERVISE_NOTIFY",
                "SUPERVISE_LIMIT",
                "SUPERVISE_ON_LIMIT",
                "SUPERVISE_DIGEST",
                "SUPERVISE_HOOK",
                "SUPERVISE_RECORDER",
                "ANTHROPIC_",
            )
        )
    }
    return {**env, "SUPERVISE_CONFIG": str(cfg), **extra}


def write(cfg, text: str):
    path = cfg / "config.toml"
    path.write_text(text)
    return path


def sessions(env) -> list[str]:
    return [s["id"] for s in json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)]


def doctor_rows(env, name: str) -> list[dict]:
    p = run_cli("doctor", "--json", env=env)
    rows = json.loads(p.stdout)  # always a list, whatever is wrong
    assert "internal error" not in p.stderr
    return [r for r in rows if r["name"] == name], p.returncode


# -- errors: no run starts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "[limits\nmargin_seconds = 60\n",
            "not valid TOML at line 1, column 8: expected ']' at the end of a table declaration (hint: fix line 1: TOML has "
            '[table] lines and key = value lines, with text in "double quotes")',
        ),
        (
            '[limits]\nmargin_seconds = "sixty"\n',
            "[limits] margin_seconds must be a number of seconds, 0 or more, not 'sixty' (hint: e.g. margin_seconds = 60)",
        ),
        ("limits = 5\n", "limits must be a table, not 5 (hint: write [limits] on a line of its own, with its keys below it)"),
        (
            "[limits]\nmargin_seconds = -5\n",
            "[limits] margin_seconds must be a number of seconds, 0 or more, not -5 (hint: e.g. margin_seconds = 60)",
        ),
        ("[limits]\nmax_continues = 0\n", "[limits] max_continues must be a whole number, 1 or more, not 0 (hint: e.g. max_continues = 5)"),
        ("[summary]\ntimeout = 0\n", "[summary] timeout must be a number of seconds, more than 0, not 0 (hint: e.g. timeout = 60)"),
        ("[summary]\nbudget = 2.5\n", "[summary] budget must be a whole number of tokens, 1 or more, not 2.5 (hint: e.g. budget = 24000)"),
        (
            '[summary]\nbackend = "cluade"\n',
            "[summary] backend must be one of auto, api, claude, codex, gemini, heuristic, not 'cluade' (hint: did you mean claude?)",
        ),
        (
            '[limits]\non_limit = "sometimes"\n',
            "[limits] on_limit must be one of notify, wait, off, not 'sometimes' (hint: e.g. on_limit = \"wait\")",
        ),
        (
            "[notify]\ndone_after_seconds = true\n",
            "[notify] done_after_seconds must be a number of seconds, 0 or more, not true (hint: e.g. done_after_seconds = 30)",
        ),
        (
            "[limits]\ncontinue_text = 5\n",
            '[limits] continue_text must be text in "double quotes", not 5 (hint: e.g. continue_text = "continue")',
        ),
        ('[summary]\nmodel = ""\n', '[summary] model must not be empty (hint: remove the line to use the default, "claude-haiku-4-5")'),
        (
            '[summary]\nbase_url = "api.example.com"\n',
            "[summary] base_url must be an http:// or https:// URL, not 'api.example.com' (hint: e.g. base_url = \"https://api.anthropic.com\")",
        ),
    ],
)
def test_a_config_error_stops_the_run_with_one_line_naming_the_file_and_key(cfg, text, said):
    env = env_of(cfg)
    first = run_cli("--", "true", env=env, check=True)  # recorded before the file went wrong
    path = write(cfg, text)
    p = run_cli("--", "true", env=env)
    assert (p.returncode, p.stderr, p.stdout) == (2, f"supervise: {path}: {said}\n", "")
    assert sessions(env) == [first.stderr.split()[2]]  # no new session; the old one is still listed
    also = run_cli("run", "--name", "x", "--", "true", env=env)
    assert (also.returncode, also.stderr) == (2, f"supervise: {path}: {said}\n")
    assert sessions(env) == [first.stderr.split()[2]]


def test_resume_is_refused_on_a_config_error_too(cfg):
    env = env_of(cfg)
    first = run_cli("--", "true", env=env, check=True).stderr.split()[2]
    path = write(cfg, "[limits]\nmax_continues = -1\n")
    p = run_cli("resume", "--last", env=env)
    assert (p.returncode, p.stderr) == (
        2,
        f"supervise: {path}: [limits] max_continues must be a whole number, 1 or more, not -1 (hint: e.g. max_continues = 5)\n",
    )
    assert sessions(env) == [first]


def test_a_key_written_into_api_key_env_is_refused_and_never_shown(cfg):
    secret = "sk-ant-api03-" + "Q" * 40
    path = write(cfg, f'[summary]\napi_key_env = "{secret}"\n')
    p = run_cli("--", "true", env=env_of(cfg))
    assert (p.returncode, p.stderr) == (
        2,
        f"supervise: {path}: [summary] api_key_env must be the name of an environment "
        "variable (letters, digits and _), not a value (hint: e.g. api_key_env = "
        '"MY_ANTHROPIC_KEY", with the key in that variable)\n',
    )
    rows, code = doctor_rows(env_of(cfg), "config")
    assert code == 1 and secret not in json.dumps(rows)


def test_an_unreadable_config_file_is_an_error_not_the_defaults(cfg):
    path = write(cfg, '[limits]\non_limit = "wait"\n')
    path.chmod(0)
    p = run_cli_unprivileged("--", "true", env=env_of(cfg))
    assert (p.returncode, p.stderr) == (
        2,
        f"supervise: cannot read {path}: Permission denied (hint: make it readable (chmod 600 it), or move it aside)\n",
    )
    assert sessions(env_of(cfg)) == []


def test_a_config_file_that_is_a_folder_is_an_error(cfg):
    (cfg / "config.toml").mkdir()
    p = run_cli("--", "true", env=env_of(cfg))
    assert (p.returncode, p.stderr) == (
        2,
        f"supervise: cannot read {cfg}/config.toml: it is a folder (hint: config.toml must be a file: move the folder aside)\n",
    )
    rows, code = doctor_rows(env_of(cfg), "config")
    assert code == 1 and [r["status"] for r in rows] == ["problem"]


def test_a_config_folder_that_is_a_file_is_an_error(tmp_path):
    not_a_folder = tmp_path / "config.toml"
    not_a_folder.write_text('[limits]\non_limit = "wait"\n')
    p = run_cli("--", "true", env=env_of(not_a_folder))
    assert (p.returncode, p.stderr) == (
        2,
        f"supervise: cannot read {not_a_folder}/config.toml: {not_a_folder} is not a "
        "directory (hint: SUPERVISE_CONFIG names the folder that holds config.toml, not the file)\n",
    )


@pytest.mark.parametrize(
    "var, value, said",
    [
        (
            "SUPERVISE_LIMIT_MARGIN",
            "abc",
            "SUPERVISE_LIMIT_MARGIN must be a number of seconds, 0 or more, not 'abc' (hint: e.g. SUPERVISE_LIMIT_MARGIN=60, or unset it)",
        ),
        (
            "SUPERVISE_SUMMARY_EVERY_MINUTES",
            "x",
            "SUPERVISE_SUMMARY_EVERY_MINUTES must be a number of minutes, 0 or more, not 'x' "
            "(hint: e.g. SUPERVISE_SUMMARY_EVERY_MINUTES=10, or unset it)",
        ),
        (
            "SUPERVISE_DIGEST_BUDGET",
            "-3",
            "SUPERVISE_DIGEST_BUDGET must be a whole number of tokens, 1 or more, not '-3' "
            "(hint: e.g. SUPERVISE_DIGEST_BUDGET=24000, or unset it)",
        ),
        (
            "SUPERVISE_SUMMARY_TIMEOUT",
            "nan",
            "SUPERVISE_SUMMARY_TIMEOUT must be a number of seconds, more than 0, not 'nan' "
            "(hint: e.g. SUPERVISE_SUMMARY_TIMEOUT=60, or unset it)",
        ),
        ("SUPERVISE_ON_LIMIT", "wiat", "SUPERVISE_ON_LIMIT must be one of notify, wait, off, not 'wiat' (hint: did you mean wait?)"),
        (
            "SUPERVISE_RECORDER_PRIORITY",
            "low",
            "SUPERVISE_RECORDER_PRIORITY must be a nice value (a whole number from -20 to 19) "
            "or idle, not 'low' (hint: e.g. SUPERVISE_RECORDER_PRIORITY=idle, or unset it)",
        ),
        (
            "SUPERVISE_SUMMARY_BACKEND",
            "gpt",
            "unknown summary backend 'gpt' in SUPERVISE_SUMMARY_BACKEND (hint: use one of: auto, "
            "api, claude, codex, gemini, heuristic (--summary-backend, SUPERVISE_SUMMARY_BACKEND "
            "or [summary] backend))",
        ),
    ],
)
def test_a_variable_with_a_bad_value_stops_the_run_naming_the_variable(cfg, var, value, said):
    env = env_of(cfg, **{var: value})
    p = run_cli("--", "true", env=env)
    assert (p.returncode, p.stderr) == (2, f"supervise: {said}\n")
    assert sessions(env) == []
    rows, code = doctor_rows(env, "config")
    assert code == 1 and rows == [
        {"name": "config", "status": "problem", "detail": said.split(" (hint: ")[0], "fix": said.split(" (hint: ", 1)[1][:-1]}
    ]


def test_an_empty_variable_is_unset_and_zero_is_a_value(cfg):
    write(cfg, "[limits]\nmargin_seconds = 0\n[notify]\ndone_after_seconds = 0\n")
    from supervisor import config

    loaded = config.load(env_of(cfg, SUPERVISE_LIMIT_MARGIN="", SUPERVISE_SUMMARY_EVERY_MINUTES=""))
    assert (loaded.limits.margin, loaded.notify.done_after, loaded.every_seconds) == (0.0, 0.0, 600.0)


# -- warnings: the run goes on -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, said",
    [
        ('[limits]\nonlimit = "wait"\n', "unknown key [limits] onlimit, ignored (hint: did you mean on_limit?)"),
        ('[notfy]\ncommand = "true"\n', "unknown table [notfy], ignored (hint: did you mean [notify]?)"),
        ('[notify]\non_limit = "wait"\n', "unknown key [notify] on_limit, ignored (hint: on_limit goes under [limits])"),
        ('backend = "claude"\n', "unknown key backend at the top of the file, ignored (hint: backend goes under [summary])"),
        (
            "[limits]\ncolour = 1\n",
            "unknown key [limits] colour, ignored (hint: [limits] takes on_limit, margin_seconds, continue_text, max_continues)",
        ),
        (
            '[summary]\napi_key = "sk-ant-x"\n',
            "unknown key [summary] api_key, ignored (hint: keep the key out of this file: set "
            "ANTHROPIC_API_KEY, or name the variable that holds it with api_key_env)",
        ),
    ],
)
def test_an_unknown_key_or_table_is_a_warning_and_the_run_goes_on(cfg, text, said):
    env = env_of(cfg)
    path = write(cfg, text)
    p = run_cli("--", "sh", "-c", "echo ran", env=env)
    assert p.returncode == 0 and "ran" in p.stdout
    warning, ended = p.stderr.splitlines()
    assert warning == f"supervise: warning: {path}: {said}"
    assert ended.startswith("supervise: session ") and "completed (exit 0)" in ended
    assert len(sessions(env)) == 1
    rows, code = doctor_rows(env, "config")
    assert rows == [
        {"name": "config", "status": "warn", "detail": f"{path}: {said.split(' (hint: ')[0]}", "fix": said.split(" (hint: ", 1)[1][:-1]}
    ]


def test_every_documented_key_is_known(cfg):
    path = write(
        cfg,
        '[summary]\nbackend = "heuristic"\nmodel = "claude-haiku-4-5"\ncodex_model = "gpt-6-luna"\n'
        'base_url = "http://127.0.0.1:9"\napi_key_env = "MY_KEY"\ntimeout = 30\nbudget = 12000\n'
        '[notify]\ncommand = "true {id} {state}"\ndone_after_seconds = 30\nterminal = "bell"\n'
        '[limits]\non_limit = "wait"\nmargin_seconds = 60\ncontinue_text = "continue"\nmax_continues = 5\n',
    )
    p = run_cli("--", "true", env=env_of(cfg))
    assert p.returncode == 0 and "warning" not in p.stderr
    rows, _ = doctor_rows(env_of(cfg), "config")
    assert rows == [{"name": "config", "status": "ok", "detail": str(path), "fix": None}]


# -- doctor --------------------------------------------------------------------------------------------------


def test_doctor_lists_a_broken_config_as_a_problem_and_still_prints_every_check(cfg):
    path = write(cfg, "[limits\n")
    p = run_cli("doctor", env=env_of(cfg))
    assert p.returncode == 1 and "internal error" not in p.stderr
    assert (
        f"problem  config     {path}: not valid TOML at line 1, column 8: expected ']' at the end of a table declaration"
    ) in p.stdout.splitlines()
    assert p.stderr.startswith("supervise doctor: 1 problem,")
    write(cfg, '[limits]\nmargin_seconds = "sixty"\nonlimit = 1\n[notfy]\n')
    rows = json.loads(run_cli("doctor", "--json", env=env_of(cfg)).stdout)
    names = [r["name"] for r in rows]
    assert {"terminal", "database", "patterns", "hook", "docker", "datasette"} <= set(names)
    assert [(r["status"], r["detail"]) for r in rows if r["name"] == "config"] == [
        ("problem", f"{path}: [limits] margin_seconds must be a number of seconds, 0 or more, not 'sixty'"),
        ("warn", f"{path}: unknown key [limits] onlimit, ignored"),
        ("warn", f"{path}: unknown table [notfy], ignored"),
    ]
    assert not {"notify", "summary", "api"} & set(names)  # they read the settings: said once, by config


def test_doctor_finds_the_notify_commands_program(cfg, tmp_path):
    write(cfg, '[notify]\ncommand = "notify-sendx supervise {name}:{state}"\n')
    rows, code = doctor_rows(env_of(cfg), "notify")
    assert code == 1 and rows == [
        {
            "name": "notify",
            "status": "problem",
            "detail": "[notify] command: notify-sendx is not on PATH: no notice would be sent",
            "fix": "install it, give its full path, or change [notify] command",
        }
    ]
    script = tmp_path / "tell.sh"
    script.write_text("#!/bin/sh\n")
    rows, code = doctor_rows(env_of(cfg, SUPERVISE_NOTIFY_COMMAND=f"{script} {{state}}"), "notify")
    assert rows == [
        {
            "name": "notify",
            "status": "problem",
            "detail": f"SUPERVISE_NOTIFY_COMMAND: {script} is not an executable file: no notice would be sent",
            "fix": "fix the path, or change SUPERVISE_NOTIFY_COMMAND",
        }
    ]
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    rows, _ = doctor_rows(env_of(cfg, SUPERVISE_NOTIFY_COMMAND=f"LANG=C {script} {{state}}"), "notify")
    assert rows == [{"name": "notify", "status": "ok", "detail": f"SUPERVISE_NOTIFY_COMMAND runs {script}", "fix": None}]
    write(cfg, '[notify]\ncommand = "curl -d \'unclosed https://hooks.example/T0KEN"\n')
    rows, _ = doctor_rows(env_of(cfg), "notify")
    assert rows == [
        {
            "name": "notify",
            "status": "problem",
            "detail": "[notify] command is not a shell command the shell can read: No closing quotation",
            "fix": "close the quote, or change the command",
        }
    ]  # the command (a webhook's secret) is not shown
