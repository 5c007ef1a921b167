"""An MCP server written by hand on the wire (stdio, newline-delimited JSON-RPC), for tool
listings no SDK-built server can send: a tool whose schema or name is broken beside good ones.

    python -m tests.mcp_servers.raw_tools MODE

MODE picks the listing; every mode also offers `echo`, a good tool that works:
    sdk_refused      a tool with no inputSchema and one whose inputSchema is {"type": "nonsense"}
                     (the SDK refuses both: MCP wants an object schema at the root)
    provider_refused a tool whose schema the SDK takes but providers refuse: a property of
                     type "nonsense"
    good             echo alone
    both_refused     one tool the SDK refuses (nonsense_root) and one a provider refuses
                     (nonsense_inside), beside echo

Stdlib only, so it starts in a blink; it never writes to stdout but JSON-RPC.
"""

from __future__ import annotations

import json
import sys

ECHO = {"name": "echo", "description": "Return the text as it came.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}
NO_SCHEMA = {"name": "no_schema", "description": "A tool with no inputSchema at all."}
ROOT_NONSENSE = {"name": "nonsense_root", "description": "Its root schema is of no type.",
                 "inputSchema": {"type": "nonsense"}}
NESTED_NONSENSE = {"name": "nonsense_inside",
                   "description": "An object schema with a property of no known type.",
                   "inputSchema": {"type": "object",
                                   "properties": {"q": {"type": "nonsense"}}}}

MODES = {
    "sdk_refused": [NO_SCHEMA, ECHO, ROOT_NONSENSE],
    "provider_refused": [ECHO, NESTED_NONSENSE],
    "good": [ECHO],
    "both_refused": [ECHO, ROOT_NONSENSE, NESTED_NONSENSE],
}


def _answer(request: dict, tools: list[dict]) -> dict | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion", "2025-06-18")
        result: dict = {"protocolVersion": version, "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw_tools", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        params = request.get("params") or {}
        text = json.dumps(params.get("arguments") or {}, ensure_ascii=False)
        if params.get("name") == "echo":
            text = str((params.get("arguments") or {}).get("text", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    mode = args[0] if args else "good"
    tools = MODES[mode]
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        answer = _answer(request, tools) if isinstance(request, dict) else None
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
