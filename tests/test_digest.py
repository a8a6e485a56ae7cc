"""The digest: a long session squeezed into a budget without losing what matters."""

import pytest

import sessiongen
from supervisor import digest


@pytest.mark.parametrize("size", [200_000, 5_000_000])
def test_planted_facts_survive_within_budget(size):
    text, planted = sessiongen.generate(size)
    d = digest.build(text, budget=24_000)
    assert d.tokens <= 24_000
    assert d.original_request.startswith(sessiongen.REQUEST)
    missing = [line for kind, line in planted if kind != "request" and line not in d.text]
    assert not missing, missing[:5]
    assert "src/billing/" in " ".join(d.files)


def test_a_small_budget_is_kept_and_keeps_the_request_and_the_latest():
    text, planted = sessiongen.generate(2_000_000)
    d = digest.build(text, budget=3_000)
    assert d.tokens <= 3_000
    assert sessiongen.REQUEST[:80] in d.text
    assert planted[-1][1] in d.text  # the latest fact is recent activity


def test_noise_and_repeats_are_dropped():
    text = "\n".join(["✻ Thinking… (3s · ↓ 120 tokens)", "────────────", "   ", "same line"] * 500 + ["❯ do the thing"])
    d = digest.build(text)
    assert d.text.count("same line") == 1
    assert "Thinking" not in d.text and "────" not in d.text


def test_token_estimate_weighs_non_ascii_more():
    assert digest.estimate_tokens("a" * 400) == 100
    assert digest.estimate_tokens("日本語のテキスト" * 10) > 80


def test_the_transcript_gives_the_exact_request_and_tool_calls():
    records = [
        {"type": "user", "message": {"role": "user", "content": "Refactor the parser.\nKeep the public API."}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "I'll split it into a lexer and a parser."},
            {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q tests/test_parser.py"}},
        ]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "is_error": True, "content": "E   AssertionError: 3 != 4"}]}},
    ]
    d = digest.build("screen text\n", transcript=records)
    assert d.original_request == "Refactor the parser.\nKeep the public API."
    assert "● Bash(pytest -q tests/test_parser.py)" in d.text
    assert "Error: E   AssertionError: 3 != 4" in d.text
