"""Tool-call arguments as the model wrote them (JSON text), read by one rule wherever they are
read: the engine running a call, each provider putting it on the wire again, the details
ledger, the tool block, the local model's calls written as text.

Valid JSON that Python will not read is the model's (or a server's) to send and no error of
ours: a number of over 4,300 digits makes json raise a ValueError whose advice
(sys.set_int_max_str_digits) means nothing to a model, and nesting past Python's stack (a
hundred thousand brackets) a RecursionError that no `except ValueError` catches. Here both are
an `Unreadable` (a ValueError) saying what is wrong in words a model can act on. Below every
part of the core (it imports nothing of it), so the providers can use it as the tools do.
"""

from __future__ import annotations

import json
from typing import Any


class Unreadable(ValueError):
    """Valid JSON that Python will not read; its message says why, for the model."""


def loads(text: str) -> Any:
    """`json.loads(text)`; raises json.JSONDecodeError for text that is not JSON, and
    Unreadable for JSON Python will not read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        # The only other ValueError json.loads raises: int() refusing over 4,300 digits.
        raise Unreadable("a number in the arguments has over 4,300 digits: write numbers of a "
                         "few digits") from None
    except RecursionError:
        raise Unreadable("the arguments are nested too deep (thousands of brackets)") from None


def read_arguments(text: str) -> dict[str, Any]:
    """The arguments as an object (blank text is {}); raises ValueError saying what is wrong
    with them."""
    try:
        value = loads(text.strip() or "{}")
    except json.JSONDecodeError as err:
        # Some of json's messages end in "at" already ("Invalid control character at").
        raise ValueError(f"the arguments are not valid JSON ({err.msg.removesuffix(' at')} "
                         f"at character {err.pos})") from None
    if not isinstance(value, dict):
        raise ValueError("the arguments must be a JSON object")
    return value


def arguments_or_none(text: object) -> dict[str, Any] | None:
    """The arguments as an object, or None when they are not one (text the model garbled, or
    JSON Python will not read): for the readers that show or resend a call, not run it."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str):
        return None
    try:
        return read_arguments(text)
    except ValueError:
        return None
