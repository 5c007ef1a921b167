"""`jarvis-tui memory`: the user's memory from the command line (list, add, delete), and as a file
to carry to another machine (export, import).

A memory file is JSON: {"format": "jarvis-tui memory", "version": 1, "entries": [...]}, each entry
as the store exports it (text, kind, state, pinned, created_at, updated_at). An import reads at
most MAX_IMPORT_BYTES, checks the whole file before it stores anything, and puts every entry
through the guard the app uses (core/memory/guard.py): a secret in a file is refused by its
entry's number, and nothing of it is printed.

cli.py hands in what it shares with every command (its connection flags, the store opened its
way, printing that reports a closed or full stdout, the settings) so neither imports the other
round a circle.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from jarvis_tui.cli_errors import CliError
from jarvis_tui.core.files import write_whole
from jarvis_tui.core.memory.guard import MemoryRefused, check, invisible_note
from jarvis_tui.core.memory.remember import Alike, remember
from jarvis_tui.core.safety.textsafe import visible
from jarvis_tui.core.session import Store, StoreError, to_json
from jarvis_tui.core.settings.config import Settings, known_secrets
from jarvis_tui.texts.notices import pick_language

FORMAT = "jarvis-tui memory"
VERSION = 1
# An entry is at most 1,000 characters (the guard's MAX_CHARS); 4 MB holds thousands of them
# with room to spare, and a file far past that is not a memory export.
MAX_IMPORT_BYTES = 4 * 2**20
_STORE_ROW = "memory import: row "  # how the store names a row it refuses (store/memory.py)
MAX_NOTES = 5  # entries of an import named for the invisible characters removed; then a count


@dataclass(frozen=True)
class Shared:
    """What cli.py shares with every command."""
    open_store: Callable[[argparse.Namespace], contextlib.AbstractContextManager[Store]]
    print: Callable[..., None]  # cli._print: OutputFailed or BrokenPipeError, for main to say
    load: Callable[[argparse.Namespace], Settings]


def add_parser(sub: argparse._SubParsersAction,
               _connection_flags: Callable[[argparse.ArgumentParser], None]) -> None:
    memory = sub.add_parser(
        "memory", help="list, add, delete, export or import what every session is told",
        description="The user's memory: short entries every session's requests carry, and the "
                    "suggestions waiting for a yes in the app.")
    _connection_flags(memory)
    actions = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="the entries and the suggestions, pinned first, one per line",
        description="One line per entry: its ID, state (active or suggested), * when pinned, kind "
                    "and text; pinned entries first, then the newest.")
    _connection_flags(listing)
    listing.add_argument("--json", action="store_true",
                         help="print them as a JSON list (id, text, kind, state, pinned, where "
                              "each was said, times)")
    add = actions.add_parser(
        "add", help="put TEXT in the memory (never a secret, at most 1,000 characters)",
        description="Every session's next request carries TEXT. A text already there (case "
                    "and spacing aside) is that entry, made active. A secret, control "
                    "characters or a text over 1,000 characters is refused (exit 2).")
    _connection_flags(add)
    add.add_argument("text", help="the fact, preference or instruction to remember")
    delete = actions.add_parser("delete", help="delete entry ID (`memory list` shows the IDs)")
    _connection_flags(delete)
    delete.add_argument("id", type=entry_id, help="the entry's ID")
    export = actions.add_parser(
        "export", help="write every entry (suggestions and dismissed ones too) as JSON",
        description="A JSON file with a version field and the entries, for `memory import` on "
                    "another machine. Written whole or not at all, readable by you only.")
    _connection_flags(export)
    export.add_argument("path", nargs="?", default="-",
                        help="the file to write; - or nothing writes to standard output")
    export.add_argument("--redact", action="store_true",
                        help="replace API keys, tokens and passwords with [redacted]")
    imp = actions.add_parser(
        "import", help="add the entries of a `memory export` file",
        description=f"Checks the whole file first (JSON, version {VERSION}, at most "
                    f"{MAX_IMPORT_BYTES // 2**20} MB, each entry through the same guard as "
                    "`memory add`) and imports nothing if any of it is wrong; entries already "
                    "there are skipped.")
    _connection_flags(imp)
    imp.add_argument("path", help="the file to read; - reads standard input")


def entry_id(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a memory entry's ID; `jarvis-tui memory list` shows them")
    return int(text)


def _alike(store: Store, settings: Settings) -> Alike | None:
    """As the app finds an entry that says the same in other words (recall_by_meaning)."""
    from jarvis_tui.core.embed.meaning import for_command
    from jarvis_tui.core.recall.alike import alike

    meaning = for_command(store, settings.recall_by_meaning)
    return None if meaning is None else functools.partial(alike, meaning)


def cmd_memory(args: argparse.Namespace, io: Shared) -> int:
    command = args.memory_command
    if command == "list":
        return _list(args, io)
    if command == "add":
        settings = io.load(args)
        secrets = known_secrets(settings)
        with io.open_store(args) as store:
            try:
                entry = remember(store, args.text, secrets, origin="cli",
                                 alike=_alike(store, settings))
            except MemoryRefused as err:
                raise CliError(f"not remembered: {err}") from None
        language = pick_language(settings.language, args.text)
        if note := invisible_note(args.text, language, secrets):
            print(f"jarvis-tui: {note}", file=sys.stderr)
        io.print(f"remembered as entry {entry.id}", flush=True)
        return 0
    if command == "delete":
        with io.open_store(args) as store:
            store.delete_memory(args.id)
        io.print(f"deleted memory entry {args.id}", flush=True)
        return 0
    if command == "export":
        return _export(args, io)
    return _import(args, io)


def _list(args: argparse.Namespace, io: Shared) -> int:
    with io.open_store(args) as store:
        entries = store.memories(("active", "suggested"))
    if args.json:
        io.print(to_json([asdict(e) for e in entries]), flush=True)
        return 0
    if not entries:
        io.print("no memory yet; add an entry with `jarvis-tui memory add TEXT`", flush=True)
        return 0
    io.print(f"{'ID':>5}  {'STATE':9}  {'PIN':3}  {'KIND':11}  TEXT")
    for e in entries:
        # visible(): an entry stored before the store removed characters that show nothing
        # shows them written out, so nothing sent is hidden from the user.
        text = " ".join(e.text.split())
        io.print(visible(f"{e.id:>5}  {e.state:9}  {'*' if e.pinned else '':3}  "
                         f"{e.kind:11}  {text}"))
    io.print(end="", flush=True)
    return 0


def _export(args: argparse.Namespace, io: Shared) -> int:
    with io.open_store(args) as store:
        entries = store.export_memory()
    text = to_json({"format": FORMAT, "version": VERSION, "exported_at": time.time(),
                    "entries": entries}, redact=args.redact) + "\n"
    if args.path == "-":
        io.print(text, end="", flush=True)
        return 0

    path = Path(args.path)
    try:
        write_whole(path, text)
    except OSError as err:
        raise CliError(f"could not write {path} ({err.strerror or err}); nothing was "
                       "written") from None
    print(f"jarvis-tui: wrote {counted(len(entries), 'memory ')} to {path}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace, io: Shared) -> int:
    where = "standard input" if args.path == "-" else args.path
    entries = _read_memory_file(args.path, where)
    settings = io.load(args)
    secrets = known_secrets(settings)
    rows, notes = [], []
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise CliError(f"{where}: entry {n} is not an object; nothing was imported")
        text = entry.get("text")
        if not isinstance(text, str):
            raise CliError(f"{where}: entry {n} was refused (has no text); nothing was imported")
        try:
            kept = check(text, secrets)
        except MemoryRefused as err:
            # The guard's line says what it looks like, never the text itself.
            raise CliError(f"{where}: entry {n} was refused ({err}); nothing was "
                           "imported") from None
        if kept != text.strip():
            note = invisible_note(text, pick_language(settings.language, kept), secrets)
            notes.append(f"jarvis-tui: {where}: entry {n}: {note}")
        rows.append({**entry, "text": kept})
    with io.open_store(args) as store:
        try:
            added = store.import_memory(rows)
        except StoreError as err:  # a row the store cannot take: said of the file's entry
            said = str(err)
            if not said.startswith(_STORE_ROW):
                raise
            raise CliError(f"{where}: entry {said.removeprefix(_STORE_ROW)}") from None
    for line in notes[:MAX_NOTES]:
        print(line, file=sys.stderr)
    if len(notes) > MAX_NOTES:
        print(f"jarvis-tui: {where}: invisible characters were removed from "
              f"{counted(len(notes) - MAX_NOTES)} more", file=sys.stderr)
    io.print(f"imported {counted(added)}, skipped {len(rows) - added:,} (already there)",
             flush=True)
    return 0


def counted(n: int, kind: str = "") -> str:
    """`n` entries, as a line says it: "1 entry", "10,000 memory entries"."""
    return f"{n:,} {kind}entr{'y' if n == 1 else 'ies'}"


def _read_memory_file(path: str, where: str) -> list[Any]:
    """The entries of a memory file, or CliError saying what is wrong with it and where."""
    try:
        if path == "-":
            if sys.stdin is None:
                raise CliError("standard input is closed, so there is no memory file to read")
            data = sys.stdin.buffer.read(MAX_IMPORT_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_IMPORT_BYTES + 1)
    except OSError as err:
        raise CliError(f"could not read {where} ({err.strerror or err}); nothing was "
                       "imported") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise CliError(f"{where} is over {MAX_IMPORT_BYTES // 2**20} MB, the most a memory file "
                       "may be; nothing was imported")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CliError(f"{where} is not UTF-8 text (a bad byte at offset {err.start}); nothing "
                       "was imported") from None
    try:
        doc = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as err:
        raise CliError(f"{where} is not JSON ({err.msg} at line {err.lineno}, column "
                       f"{err.colno}); nothing was imported") from None
    except RecursionError:
        raise CliError(f"{where} is not a memory file (nested too deeply); nothing was "
                       "imported") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CliError(f"{where} is not a jarvis-tui memory file (`jarvis-tui memory export` "
                       "writes one); nothing was imported")
    version = doc.get("version")
    if version != VERSION or isinstance(version, bool):
        shown = json.dumps(version)[:20]
        raise CliError(f"{where} is a memory file of version {shown}; this jarvis-tui reads "
                       f"version {VERSION}; nothing was imported")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise CliError(f"{where}: \"entries\" is not a list; nothing was imported")
    return entries
