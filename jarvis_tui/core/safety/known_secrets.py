"""Secrets the app was given (the API key, a tool server's env and headers), hidden as *** where
they come back: a server, a proxy or a crashing tool server can echo one, escaped or
percent-encoded, into an error, a stderr line or a tool result, and from there it would reach
the screen, the session store, the export and the next request to the model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

HIDDEN = "***"
# Hiding "x" would turn every x in the text into ***: shorter values are left alone.
MIN_SECRET_CHARS = 8

# Names whose values are secrets (GITHUB_TOKEN, X-Api-Key, Authorization, DB_PASSWORD, --token).
_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|cookie", re.IGNORECASE)


def printed_forms(secret: str) -> set[str]:
    """The secret as written, trimmed, on one line, escaped by repr (str and bytes) and JSON,
    and percent-encoded."""
    forms = {secret, secret.strip(), " ".join(secret.split()), repr(secret)[1:-1],
             repr(secret.encode("utf-8"))[2:-1], json.dumps(secret)[1:-1],
             json.dumps(secret, ensure_ascii=False)[1:-1], quote(secret, safe=""),
             quote(secret), quote_plus(secret)}
    return {form for form in forms if form}


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def token_shaped(value: str) -> bool:
    """A value that can only be a credential, whatever it is named: one long word of letters
    and digits, not a path or an address (a path in env is the server's to use, and hiding it
    would blank it out of every tool result)."""
    return (len(value) >= 16 and not re.search(r"\s|://", value)
            and not value.startswith(("/", "~", ".")) and value.count("/") < 2
            and bool(re.search(r"[A-Za-z]", value)) and bool(re.search(r"\d", value)))


def table_secrets(table: Mapping[str, str]) -> list[str]:
    """The secret values of an env or headers table: those named like secrets, and those shaped
    like tokens; for a header's "Bearer TOKEN" the token alone as well."""
    found = []
    for name, value in table.items():
        if secret_name(name) or token_shaped(value.strip()):
            found += [value, *value.split()[-1:]]
    return [v for v in dict.fromkeys(found) if len(v.strip()) >= MIN_SECRET_CHARS]


class Scrubber:
    """Replaces every printed form of the given secrets with ***, longest first (so a form
    that holds another is hidden whole)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for secret in secrets if len(secret.strip()) >= MIN_SECRET_CHARS
                 for form in printed_forms(secret)}
        self.forms = sorted(forms, key=len, reverse=True)
        self._any = re.compile("|".join(map(re.escape, self.forms))) if self.forms else None

    def __call__(self, text: str) -> str:
        return self._any.sub(HIDDEN, text) if self._any is not None else text
