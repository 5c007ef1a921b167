"""A whole session as Markdown or JSON: every message ever stored, covered or not."""

from __future__ import annotations

import json
import time
from typing import Any

ROLE_TITLES = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def to_markdown(data: dict[str, Any]) -> str:
    conv = data["conversation"]
    out = [f"# {conv.get('title') or 'Untitled session'}", ""]
    out.append(f"Session {conv['id']} · model {conv.get('model') or '?'} · "
               f"{_date(conv.get('created_at'))}")
    out.append("")
    for msg in data["messages"]:
        notes = []
        if msg.get("status") != "complete":
            notes.append(msg.get("status"))
        if msg.get("covered"):
            notes.append(f"summarised in #{msg.get('summary_id')}")
        if msg.get("pinned"):
            notes.append("pinned")
        suffix = f" ({', '.join(notes)})" if notes else ""
        out += [f"## {ROLE_TITLES.get(msg['role'], msg['role'])}{suffix}", "", msg["content"], ""]
    if data.get("summaries"):
        out += ["---", "", "# Summaries", ""]
        for s in data["summaries"]:
            out += [f"## Summary #{s['id']} ({s['kind']}, {s['covered_count']} messages, "
                    f"{_date(s.get('created_at'))})", "", s["content"], ""]
    return "\n".join(out).rstrip() + "\n"


def _date(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"
