"""`export --redact`'s rules (core/safety/redact.py): every credential format issue 25 found
missed, in the text around it as a user pastes it, and the ordinary text that must stay as it is."""

from __future__ import annotations

import pytest

from jarvis_tui.core.safety.redact import REDACTED, redact
from tests.secret_formats import CASES


@pytest.mark.parametrize("fmt, text, parts, kept", CASES, ids=[c[0] for c in CASES])
def test_redact_hides_each_format(fmt, text, parts, kept):
    shown = redact(text)
    assert REDACTED in shown
    for part in parts:
        assert part not in shown, f"{fmt}: {part!r} left in {shown!r}"
    assert kept in shown


@pytest.mark.parametrize("text", [
    "api_key = os.environ['OPENAI_API_KEY']",
    "token = tokenizer.encode(text)",
    "secret = load_secret()",
    "def login(password: str, token: Optional[str] = None) -> None:",
    'password = "${DB_PASSWORD}" is better than TOKEN=$GITHUB_TOKEN',
    "the bearer of this letter; Bearer instrument; Basic setup first",
    "max_tokens = 512, tokens: 8192, token_count: many",
    "connect to postgres://db.internal:5432/app (no password)",
    "https://hooks.example.com/services/T0/B0",
    "-----BEGIN PUBLIC KEY-----",
    "The private key never leaves the machine; the secret is patience.",
])
def test_redact_leaves_code_and_prose_alone(text):
    assert redact(text) == text


def test_redact_marks_with_what_it_is_given():
    assert redact("--token ghp_16C7e42F292c6912E7710c838347Ae178B4a", mark="***") == \
        "--token ***"


@pytest.mark.parametrize("blob", ["A" * 200_000, "ab1-" * 50_000, "token" * 40_000,
                                  "a:" * 100_000])
def test_a_long_word_takes_linear_time(blob):
    """A base64 image or a minified file in a session: a name rule tried at every letter of
    one long word took minutes (quadratic) before its start was anchored; at this size a
    quadratic rule would hold the test for hours, so a regression cannot pass unseen (no clock
    is read here: a loaded machine must not fail it)."""
    assert redact(blob) == blob
