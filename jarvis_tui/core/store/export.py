"""A whole session as Markdown or JSON: every message ever stored, covered or not.

Exports are faithful by default. With `redact=True` anything that looks like a credential is
replaced by "[redacted]" first, so a session where a key was pasted can be shared.

An export is a file the user will `cat` or paste from, so no terminal control sequence gets into
one: Markdown is made `terminal_safe` (as every copy out of the app is); JSON, the faithful
backup, keeps them all as JSON escapes (ESC as \\u001b), which a terminal shows as text and a
JSON reader reads back.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from jarvis_tui.core import costs
from jarvis_tui.core.messages import describe_calls
from jarvis_tui.core.safety.redact import REDACTED as REDACTED  # the mark, for callers of redact
from jarvis_tui.core.safety.redact import redact
from jarvis_tui.core.safety.textsafe import json_escaped, terminal_safe

ROLE_TITLES = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}


def _redact_all(value: Any) -> Any:
    # Every string: tool calls and metadata are text the user never reads before sharing (the
    # title shows no key whatever the flag: records.SessionInfo).
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_all(v) for v in value]
    return value


# json.dumps escapes C0 controls (ESC among them) but writes DEL and the C1 controls as they are.
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")


def to_json(data: dict[str, Any], *, redact: bool = False) -> str:
    """JSON as faithful as the store, and as safe to print: characters that show nothing (a
    tag-character instruction an older version kept in memory, bidi in a turn) are escaped."""
    text = json.dumps(_redact_all(data) if redact else data, ensure_ascii=False, indent=2)
    return json_escaped(_RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def to_markdown(data: dict[str, Any], *, redact: bool = False) -> str:
    if redact:
        data = _redact_all(data)
    conv = data["conversation"]
    out = [f"# {conv.get('title') or 'Untitled session'}", ""]
    out.append(f"Session {conv['id']} · model {conv.get('model') or '?'} · "
               f"{_date(conv.get('created_at'))}")
    out.append("")
    if data.get("problems"):
        out.append("> **Note:** some stored fields could not be read and are left out of this "
                   "export (a JSON export holds their stored text):")
        out += [f"> - {p['problem']}" for p in data["problems"]]
        out.append("")
    shown = [m for m in data["messages"] if m.get("on_branch_shown", True)]
    others = [m for m in data["messages"] if not m.get("on_branch_shown", True)]
    out += _messages_md(shown)
    if others:
        out += ["---", "", "# Other branches", "",
                "Replies regenerated and questions edited since: these turns are kept, but the "
                "branch above is the one shown and sent.", ""]
        out += _messages_md(others, branch=True)
    if data.get("summaries"):
        out += ["---", "", "# Summaries", ""]
        for s in data["summaries"]:
            out += [f"## Summary #{s['id']} ({s['kind']}, {s['covered_count']} messages, "
                    f"{_date(s.get('created_at'))})", ""]
            out += [f"*{_counts(u)}*" for u in s.get("usage") or []]
            out += ["", s["content"], ""] if s.get("usage") else [s["content"], ""]
    if data.get("memory"):
        out += ["---", "", "# Memory", "",
                "What every request carried at the front, besides the messages:", ""]
        out += [_memory_md(entry) for entry in data["memory"]]
        out.append("")
    usage = data.get("usage") or {}
    if usage.get("chat_requests") or usage.get("summary_requests"):
        out += ["---", "", "# Usage", "", *_totals(usage), ""]
    return terminal_safe("\n".join(out).rstrip() + "\n")


def _messages_md(messages: list[dict[str, Any]], *, branch: bool = False) -> list[str]:
    """Each message as a heading with its state, its usage and its text; on another branch,
    which message it follows (ids are the JSON export's)."""
    out: list[str] = []
    for msg in messages:
        notes = []
        if msg.get("status") != "complete":
            notes.append(msg.get("status"))
        if msg.get("covered"):
            notes.append(f"summarised in #{msg.get('summary_id')}")
        if msg.get("pinned"):
            notes.append("pinned")
        if msg.get("excluded"):
            notes.append("excluded from requests")
        if branch:
            notes.append(f"message #{msg.get('id')}, follows #{msg.get('parent_id')}"
                         if msg.get("parent_id") else f"message #{msg.get('id')}, first")
        suffix = f" ({', '.join(notes)})" if notes else ""
        title = ROLE_TITLES.get(msg['role'], msg['role'])
        if msg["role"] == "tool" and msg.get("name"):
            title = f"{title}: {msg['name']}"
        out += [f"## {title}{suffix}", ""]
        out += [f"*{_counts(u)}*" for u in msg.get("usage") or []]
        content = _fenced(msg["content"]) if msg["role"] == "tool" else msg["content"]
        out += ["", content, ""] if msg.get("usage") else [content, ""]
        if msg.get("tool_calls"):
            out += [f"- `{line}`" for line in describe_calls(msg["tool_calls"]).splitlines()]
            out.append("")
    return out


def _memory_md(entry: dict[str, Any]) -> str:
    """One entry as a list item: its text, kind, whether pinned, and where it was said."""
    notes = [entry.get("kind") or "fact"]
    if entry.get("pinned"):
        notes.append("pinned")
    if entry.get("conversation_id") is None:
        notes.append("typed or imported")
    else:
        notes.append(f"from session {entry['conversation_id']}"
                     + (f", message #{entry['message_id']}" if entry.get("message_id") else ""))
    text = " ".join(str(entry.get("text", "")).split())
    return f"- {text} ({', '.join(notes)})"


def _fenced(text: str) -> str:
    """A tool's output as a code block: whatever it holds (Markdown, a diff, backticks) reads
    as it came. The fence is longer than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _counts(u: dict[str, Any]) -> str:
    """One request's counts: "prompt 1,234 tokens (1,000 cached) · completion 56 · gpt-4o"."""
    parts = [f"prompt {costs.tokens(u['prompt_tokens'])} tokens" + _cached(u)]
    parts.append(f"completion {costs.tokens(u['completion_tokens'])}")
    if u.get("freed_tokens") is not None:
        parts.append(f"freed {costs.tokens(u['freed_tokens'])}")
    if u.get("model"):
        parts.append(u["model"])
    return " · ".join(parts)


def _cached(u: dict[str, Any]) -> str:
    cached, written = u.get("cached_tokens"), u.get("cache_write_tokens")
    if cached is None and written is None:
        return " (cache not reported)"
    said = [f"{costs.tokens(cached)} cached"] if cached is not None else []
    said += [f"{costs.tokens(written)} written to the cache"] if written else []
    return f" ({', '.join(said)})" if said else ""


def _totals(usage: dict[str, Any]) -> list[str]:
    lines = [f"- requests: {usage['chat_requests']} chat, {usage['summary_requests']} summary",
             f"- prompt tokens: {costs.tokens(usage['prompt_tokens'])}"]
    cached, reported = usage.get("cached_tokens"), usage.get("cached_reported_requests") or 0
    if cached is None:
        lines.append("- cached: not reported by the server")
    else:
        requests = usage["chat_requests"] + usage["summary_requests"]
        lines.append(f"- cached: {costs.tokens(cached)} (reported by {reported} of {requests} "
                     "requests)")
    if usage.get("cache_write_tokens"):
        lines.append(f"- written to the cache: {costs.tokens(usage['cache_write_tokens'])}")
    lines.append(f"- completion tokens: {costs.tokens(usage['completion_tokens'])}")
    if usage.get("freed_tokens") is not None:
        lines.append(f"- freed by compaction: {costs.tokens(usage['freed_tokens'])}")
    return lines


def _date(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"
