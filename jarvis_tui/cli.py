"""Command line: argument parsing, settings precedence, and the `ask`/`sessions`/`export` commands.

Every failure the user can cause or meet ends in one clear line on stderr and a non-zero exit,
never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from jarvis_tui import __version__, cli_memory
from jarvis_tui.cli_errors import CliError
from jarvis_tui.core import events as ev
from jarvis_tui.core.attach.message import message_with
from jarvis_tui.core.costs import CompactionCost
from jarvis_tui.core.messages import FAILED, Message
from jarvis_tui.core.providers import make_provider, missing_key
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LOCAL_N_CTX,
    LocalServer,
    LocalServerError,
    free_port,
    llama_cpp_command,
    local_model_installed,
    local_model_path,
)
from jarvis_tui.core.providers.registry import PROVIDERS
from jarvis_tui.core.safety.textsafe import SafeStream, terminal_safe, visible
from jarvis_tui.core.session import (
    ChatSession,
    Store,
    StoreError,
    default_db_path,
    to_json,
    to_markdown,
)
from jarvis_tui.core.settings.config import (
    PROVIDER_KEYS,
    ConfigError,
    Settings,
    config_path,
    config_warnings,
    known_secrets,
    load_settings,
    price_for,
    provider_chosen,
    validate,
    with_overrides,
)
from jarvis_tui.core.settings.schema import Choices, with_flags
from jarvis_tui.texts.notices import describe, pick_language, usage_line

if TYPE_CHECKING:
    from jarvis_tui.cli_attach import Attaching

EXIT_FAILED = 1  # the round failed (server, network, overflow that could not be recovered)
EXIT_USAGE = 2  # bad flags, config or input: nothing was sent
EXIT_PIPE = 141  # stdout was closed by its reader: what a shell shows for a SIGPIPE death
EXIT_NO_OUTPUT = 74  # stdout was closed before we started (`>&-`): sysexits' EX_IOERR
SEARCH_LIMIT = 10_000  # turns `search` shows at most (the store counts in 64 bits)


class OutputFailed(Exception):
    """Standard output could not be written (a full disk, an I/O error), which unlike a reader
    that went away is worth a line; the command exits with EXIT_NO_OUTPUT."""


def _connection_flags(p: argparse.ArgumentParser, *, sub: bool = True) -> None:
    # On subcommands the defaults are suppressed so `jarvis-tui --model X ask ...` keeps X.
    g = p.add_argument_group("connection and budget (override the config file and env)")
    if sub:
        g.argument_default = argparse.SUPPRESS
    g.add_argument("--config", type=Path, help="config file (default: the XDG config dir)")
    g.add_argument("--db", type=Path, help="session database (default: the XDG data dir)")
    g.add_argument("--local", action="store_true",
                   help="run the bundled small model on this machine (needs the local extra)")
    for setting in with_flags():
        choices = setting.check.values if isinstance(setting.check, Choices) else None
        g.add_argument(f"--{setting.name.replace('_', '-')}", dest=setting.name,
                       type=None if setting.kind is str else setting.kind, choices=choices,
                       metavar=setting.flag.metavar if setting.flag else None,
                       help=setting.flag.help if setting.flag else None)


OVERRIDE_KEYS = tuple(setting.name for setting in with_flags())


def session_id(text: str) -> int:
    """A session number as typed. Any size: one beyond what the store can hold is then "there is
    no session N" like any other, and only what is not a number at all is a usage error."""
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a session number; `jarvis-tui sessions` lists them")
    if len(digits) > 4000:  # past what Python turns into an int by default
        raise argparse.ArgumentTypeError(
            f"there is no session {text[:12]}… ({len(digits)} digits); `jarvis-tui sessions` "
            "lists them")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jarvis-tui",
        description="A terminal chat client that never crashes on a full context window.")
    parser.add_argument("--version", action="version", version=f"jarvis-tui {__version__}")
    _connection_flags(parser, sub=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ask = sub.add_parser(
        "ask", help="send one message in a session and print the reply",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The reply streams to stdout; compaction and retry notices go to stderr.\n"
               "Exit status: 0 answered, 1 the round failed (any partial reply is kept), "
               "2 bad input or settings, 74 stdout was closed or failed (the reply is kept).\n"
               "Examples:\n  jarvis-tui ask \"Summarise our plan\"\n"
               "  git diff | jarvis-tui ask --new -\n"
               "  jarvis-tui ask --attach src/app.py --attach app.log:120-180 \"Why does it "
               "crash?\"")
    _connection_flags(ask)
    which = ask.add_mutually_exclusive_group()
    which.add_argument("--new", action="store_true", help="start a new session")
    which.add_argument("--session", type=session_id, metavar="ID", help="continue session ID")
    ask.add_argument("text", help="the message; - reads it from standard input")
    ask.add_argument("--usage", action="store_true",
                     help="after the reply, print its token counts (prompt, cached, completion) "
                          "and cost, when the model has a price in the config, to stderr")
    ask.add_argument("--allow-tool", action="append", default=[], metavar="NAME",
                     help="let the model run this tool without asking (repeat for more; "
                          "SERVER.* for all of a server's); ask cannot ask, so it refuses "
                          "every other call and tells the model so")
    ask.add_argument("--no-tools", action="store_true",
                     help="start no tool servers and offer the model no tools")
    ask.add_argument("--attach", action="append", default=[], metavar="PATH",
                     help="send a file (or a folder's listing) with the message, read now "
                          "(repeat for more); PATH:FIRST-LAST sends those lines only")
    ask.add_argument("--whole", action="store_true",
                     help="send attached files whole even when larger than the window (older "
                          "turns are summarised); without it such a file goes as its digest, "
                          "which the model reads in ranges")

    sessions = sub.add_parser("sessions", help="list sessions, newest first")
    _connection_flags(sessions)

    search = sub.add_parser(
        "search", help="find earlier turns of a session by their words or meaning (Chinese or "
                       "English)",
        description="Whole turns that share words with QUERY or, while recall_by_meaning is "
                    "on, mean what it says, best first, with their dates; "
                    "turns already folded into the summary are marked; turns taken out of "
                    "requests (x or /forget in the app) are not searched. One session (the "
                    "latest, or --session), or with --all every session.")
    _connection_flags(search)
    search.add_argument("query", help="words, a name or a topic to look for")
    search.add_argument("--session", type=session_id, metavar="ID",
                        help="session ID (default: the latest)")
    search.add_argument("--limit", type=int, default=10, help="turns to show (default 10)")
    search.add_argument("--all", action="store_true", dest="all_sessions",
                        help="search every session; each turn under its session's id, title "
                             "and date")

    export = sub.add_parser("export", help="write a whole session to standard output")
    _connection_flags(export)
    export.add_argument("session", nargs="?", type=session_id,
                        help="session ID (default: the latest)")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("--redact", action="store_true",
                        help="replace API keys, tokens and passwords with [redacted]")
    cli_memory.add_parser(sub, _connection_flags)
    return parser


def load(args: argparse.Namespace) -> Settings:
    config = getattr(args, "config", None)
    if config is not None and not config.is_file():
        raise CliError(f"the config file {config} does not exist (leave out --config to use "
                       "the default one)")
    overrides = {k: getattr(args, k, None) for k in OVERRIDE_KEYS}
    if getattr(args, "local", False):
        # The address is the child's, known once it runs; a placeholder passes validation.
        overrides.update(provider="openai", base_url="http://127.0.0.1:1/v1", api_key="",
                         model=LOCAL_MODEL_NAME)
    settings = load_settings(args.config, overrides=overrides)
    if getattr(args, "local", False):
        window = settings.context_window or LOCAL_N_CTX
        # Reserves sized for a hosted 128k model would leave a 2k demo model almost no room.
        settings = with_overrides(
            settings, context_window=window,
            response_reserve=min(settings.response_reserve, window // 8),
            system_reserve=min(settings.system_reserve, window // 16))
    problems = validate(settings)
    if problems:
        raise CliError("invalid settings: " + "; ".join(problems))
    return settings


@contextlib.contextmanager
def open_store(args: argparse.Namespace) -> Iterator[Store]:
    """The session store for a command. What it has to tell the user (an index it rebuilt, a
    stored field it could not read) goes to stderr: what opening found at once, except in the
    full-screen app, which can show `store.notices` itself, and the rest when the command ends."""
    with Store(args.db) as store:
        if args.command:
            _print_notices(store)
        try:
            yield store
        finally:
            _print_notices(store)


def _print_notices(store: Store) -> None:
    for line in store.take_notices():
        _say(f"jarvis-tui: {terminal_safe(line)}")


def startup_warnings(args: argparse.Namespace) -> list[str]:
    """What the user should hear about before any command runs (the TUI shows them too)."""
    return config_warnings(getattr(args, "config", None))


def hold_closed_streams() -> None:
    """A standard descriptor closed before we started (`>&-`, `<&-`, `2>&-`) would be the next
    one a file or socket gets: the session database as fd 1, where a child's output or a stray
    write would land. /dev/null holds its place. Python has already made the closed stream's
    sys attribute None, which is how the commands know; stderr, though, gets a stream on
    /dev/null, since print(file=None) would write the notices into stdout, among the reply."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)  # inheritable, as a standard descriptor is
                os.close(null)
            else:
                os.set_inheritable(fd, True)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # for the life of the process


def main(argv: Sequence[str] | None = None) -> int:
    hold_closed_streams()
    args = build_parser().parse_args(argv)
    if sys.stdout is None and args.command != "ask":
        # Nothing was asked that could be lost; there is just nowhere to print to.
        what = "the full-screen app has nowhere to draw" if args.command is None \
            else f"`{args.command}` has nowhere to print"
        _say(f"jarvis-tui: standard output is closed, so {what}; send it to a file "
             "(> FILE) instead")
        return EXIT_NO_OUTPUT
    if sys.stdin is None and args.command is None:
        _say("jarvis-tui: standard input is closed, so the full-screen app cannot read the "
             "keyboard; start it from a terminal (`jarvis-tui ask` needs no keyboard)")
        return EXIT_USAGE
    warnings = startup_warnings(args)
    for line in warnings:
        _say(f"jarvis-tui: warning: {terminal_safe(line)}")
    try:
        if args.command == "ask":
            return cmd_ask(args)
        if args.command == "sessions":
            return cmd_sessions(args)
        if args.command == "export":
            return cmd_export(args)
        if args.command == "search":
            return cmd_search(args)
        if args.command == "memory":
            return cli_memory.cmd_memory(args, cli_memory.Shared(open_store, _print, load))
        return cmd_tui(args, warnings)
    except LocalServerError as err:
        _say(f"jarvis-tui: {terminal_safe(str(err))}")
        return EXIT_FAILED
    except (CliError, ConfigError, StoreError) as err:
        # These can quote a config key or a path, which are text from outside too.
        _say(f"jarvis-tui: {terminal_safe(str(err))}")
        return EXIT_USAGE
    except OutputFailed as err:
        _say(f"jarvis-tui: could not write to standard output ({err}); send it where there "
             "is room")
        return EXIT_NO_OUTPUT
    except KeyboardInterrupt:
        _say("\njarvis-tui: interrupted; what had arrived of the reply is kept in the session")
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): nothing more to say, to anyone.
        _silence(sys.stdout)
        return EXIT_PIPE


def cmd_tui(args: argparse.Namespace, warnings: Sequence[str] = ()) -> int:
    # `warnings` were printed already, but the full screen hides them: the app shows them too.
    settings, how = load_choosing_local(args)
    from jarvis_tui.ui.actions import keys_problem  # Textual is imported only when the TUI runs
    from jarvis_tui.ui.app import JarvisApp

    # Which actions and key names exist is Textual's and the interface's to say, not the core's.
    problem = keys_problem(settings.keys)
    if problem:
        raise CliError(f"{getattr(args, 'config', None) or config_path()}: {problem}")

    # The app starts the model server itself, so its loading shows on screen, not before it.
    with open_store(args) as store, \
            local_server(args, settings, start=False) as (settings, server):
        JarvisApp(settings, store, config_file=getattr(args, "config", None),
                  warnings=list(warnings), local_server=server, first_run=how == "none",
                  window_given=getattr(args, "context_window", None) is not None).run()
    return 0


def choose_local(args: argparse.Namespace) -> str:
    """With no provider, address or key given anywhere: the local model when the `local` extra is
    installed ("auto", and args.local is set), else "none" (the user must be told how to pick
    one). "chosen" when the user did pick something, --local included."""
    if getattr(args, "local", False):
        return "chosen"
    given = {k: getattr(args, k, None) for k in PROVIDER_KEYS}
    if provider_chosen(getattr(args, "config", None), overrides=given):
        return "chosen"
    if not local_model_installed():
        return "none"
    args.local = True
    return "auto"


def load_choosing_local(args: argparse.Namespace) -> tuple[Settings, str]:
    """The settings, and how the provider was chosen (see choose_local); the local model is
    announced only once the rest of the settings are known to be good."""
    how = choose_local(args)
    settings = load(args)
    if how == "auto":
        print(f"jarvis-tui: no provider is configured, so a small model runs on this machine "
              f"({LOCAL_MODEL_NAME}); `jarvis-tui --help` and README's \"Providers\" say how "
              "to connect a hosted one", file=sys.stderr)
    return settings, how


@contextlib.contextmanager
def local_server(args: argparse.Namespace, settings: Settings, *, start: bool = True
                 ) -> Iterator[tuple[Settings, LocalServer | None]]:
    """With --local: the local model's server, for the length of the command, and settings that
    point at it; without, the settings as they are and None. `start=False` leaves starting it
    to the caller (the app shows its progress); it is stopped here in any case."""
    if not getattr(args, "local", False):
        yield settings, None
        return
    port = free_port()
    model = local_model_path(_file_progress(), language=pick_language(settings.language),
                             notice=lambda line: _say(f"jarvis-tui: {terminal_safe(line)}"))
    server = LocalServer(
        llama_cpp_command(model, settings.context_window, "127.0.0.1", port),
        port=port, log_path=default_db_path().parent / "local-server.log")
    try:
        if start:
            _start_printing_progress(server, settings)
        yield with_overrides(settings, base_url=server.base_url), server
    finally:
        server.stop()


def _start_printing_progress(server: LocalServer, settings: Settings) -> None:
    shown: list[float] = []

    def progress(seconds: float) -> None:
        # On a terminal one line counts up; in a log, one line says it is loading.
        if sys.stderr.isatty():
            print(f"\rjarvis-tui: loading the local model… {seconds:.0f}s", end="",
                  file=sys.stderr, flush=True)
        elif not shown:
            print("jarvis-tui: loading the local model…", file=sys.stderr, flush=True)
        shown.append(seconds)

    asyncio.run(server.start(progress))
    print(f"{chr(13) if shown and sys.stderr.isatty() else ''}jarvis-tui: the local model is "
          f"ready at {server.base_url} ({LOCAL_MODEL_NAME}, {settings.context_window} tokens)",
          file=sys.stderr)


def _file_progress() -> Callable[[int, int], None]:
    """Prints the one-time assembly (or re-check) of the model's file: a line that counts up
    on a terminal, one line and its end in a log."""
    state = {"shown": False, "last": -1}

    def progress(done: int, total: int) -> None:
        percent = done * 100 // max(total, 1)
        if percent == state["last"]:
            return
        state["last"] = percent
        what = (f"jarvis-tui: preparing the local model's file ({total / 2**20:.0f} MB, "
                "checked by sha256; once)")
        if sys.stderr.isatty():
            print(f"\r{what}… {percent}%", end="\n" if done >= total else "",
                  file=sys.stderr, flush=True)
        elif not state["shown"]:
            print(f"{what}…", file=sys.stderr, flush=True)
        state["shown"] = True

    return progress


def _read_text(text: str) -> str:
    """The message: the argument, or standard input for "-". Bytes that are not UTF-8 (a Latin-1
    file piped in, a stray byte in an argument) become U+FFFD, said once, before anything is
    created: one bad byte must not cost the message or leave an empty session behind."""
    if text == "-":
        if sys.stdin is None:
            raise CliError("standard input is closed, so there is no message to read; give "
                           "it as the argument instead of -")
        data = sys.stdin.buffer.read()
        where = "standard input"
    else:
        # Python hands undecodable argument bytes over as lone surrogates (surrogateescape).
        data = text.encode("utf-8", "surrogateescape")
        where = "the message"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        _say(f"jarvis-tui: {where} is not valid UTF-8 (first bad byte at offset {err.start}); "
             "each bad byte was replaced by \ufffd")
    text = text.removeprefix("\ufeff")  # a byte-order mark from a Windows editor
    if not text.strip():
        raise CliError("nothing to send: the message is empty")
    return text


def _print(text: str = "", *, end: str = "\n", flush: bool = False) -> None:
    """Text to standard output for the printing commands: OutputFailed when it cannot be
    written, BrokenPipeError (left to main) when its reader went away."""
    try:
        sys.stdout.write(text + end)
        if flush:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        _silence(sys.stdout)  # the interpreter's last flush would fail again
        raise OutputFailed(err.strerror or str(err)) from None


def _say(line: str) -> None:
    """One line on stderr; a closed stderr is no reason to stop."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _conversation_id(store: Store, args: argparse.Namespace, settings: Settings) -> int:
    if args.session is not None:
        if store.get_conversation(args.session) is None:
            raise CliError(f"there is no session {args.session}; `jarvis-tui sessions` lists them")
        return args.session
    latest = None if args.new else store.latest_conversation()
    if latest is not None:
        return latest.id
    conv = store.create_conversation(model=settings.model)
    print(f"jarvis-tui: started session {conv.id}", file=sys.stderr)
    return conv.id


def cmd_ask(args: argparse.Namespace) -> int:
    text = _read_text(args.text)
    # What comes on standard input was not typed at the prompt: a file, a log, a document
    # piped in is pasted (never read for memory suggestions), however much it reads like prose.
    pasted = ((0, len(text)),) if args.text == "-" else ()
    settings, how = load_choosing_local(args)
    _require_key(settings, nothing_chosen=how == "none")
    sendings = []
    if args.attach:
        from jarvis_tui.cli_attach import read_attachments

        try:
            sendings = read_attachments(args.attach, pick_language(settings.language, text),
                                        model=settings.model)
        except CliError:
            if args.text == "-":  # read from a pipe, it has no other copy
                with open_store(args) as store:
                    _keep_unanswered(store, args, settings,
                                     Message("user", text, pasted=pasted))
            raise
    question = (message_with(text, sendings, pasted) if sendings
                else Message("user", text, pasted=pasted))
    with open_store(args) as store, contextlib.ExitStack() as stack:
        try:
            settings, _ = stack.enter_context(local_server(args, settings))
        except (LocalServerError, KeyboardInterrupt):
            if args.text == "-":  # read from a pipe, it has no other copy
                _keep_unanswered(store, args, settings, question)
            raise
        conv_id = _conversation_id(store, args, settings)
        if sendings:
            from jarvis_tui.cli_attach import Attaching, warn_changed

            warn_changed(store, conv_id, sendings, pick_language(settings.language, text), _say)
        attaching = Attaching(text, pasted, sendings, args.whole) if sendings else None
        return asyncio.run(_ask(settings, store, conv_id, question,
                                forget_limit=getattr(args, "context_window", None) is not None,
                                usage=args.usage, allow=args.allow_tool,
                                tools=not args.no_tools, attaching=attaching))


def _attached_question(store: Store, conv_id: int, session: ChatSession, attaching: Attaching,
                       question: Message, language: str) -> Message:
    """The question with its files as they go (cli_attach.Attaching); one that cannot go (an
    image the model was found not to take) stops the command, its piped words kept."""
    try:
        return attaching.question(session, language, _say)
    except CliError:
        if attaching.pasted:  # read from a pipe, it has no other copy
            _keep_unanswered(store, None, session.settings, question, conv_id)
        raise


def _keep_unanswered(store: Store, args: argparse.Namespace | None, settings: Settings,
                     question: Message, conv_id: int | None = None) -> None:
    """Store a question that never went out (the local model could not start) as one asked
    and not answered, as a failed round leaves it: read from standard input, it has no other
    copy. Kept out of later requests; the app asks it again on regenerate."""
    question.status = FAILED
    try:
        if conv_id is None:
            conv_id = _conversation_id(store, args, settings)
        store.add_message(conv_id, question)
    except StoreError as err:
        _say(f"jarvis-tui: the message from standard input could not be kept either: {err}")
        return
    _say(f"jarvis-tui: the message from standard input is kept in session {conv_id}, "
         f"unanswered (`jarvis-tui export {conv_id}` prints it)")


def _require_key(settings: Settings, nothing_chosen: bool = False) -> None:
    var = missing_key(settings)
    if not var:
        return
    if nothing_chosen:
        others = " or ".join(p.key_env for p in PROVIDERS.values() if p.key_env not in ("", var))
        raise CliError(
            f"no provider is configured. Pick one of three ways: set {var} (or "
            f"{others}) for a hosted model; or put provider, base_url and model in "
            f"{config_path()}; or pass --base-url/--provider for a server on this machine "
            "(--provider ollama for Ollama). With the local extra installed, a small model "
            "runs on this machine by itself (README, \"Run offline\").")
    raise CliError(f"no API key: set {var} (or api_key in the config file), or point "
                   "--base-url at a local server (--provider ollama for Ollama)")


class _Output:
    """Standard output for a streaming reply. When the reader goes away (`| head -c 5`), the
    reply is still received to its end and stored; only the printing stops, quietly. A stdout
    closed from the start (None), or one that fails (a full disk), prints no more: `trouble`
    says which, for a line on stderr, and the exit status says so."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.open = stream is not None
        self.trouble = None if self.open else "is closed, so the reply was not printed"

    def write(self, text: str) -> None:
        if not self.open or not text:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except BrokenPipeError:
            self.open = False
            _silence(self._stream)
        except OSError as err:
            self.open = False
            self.trouble = (f"failed ({err.strerror or err}), so the reply was not printed "
                            "whole")
            _silence(self._stream)

    def status(self, code: int) -> int:
        if self.trouble:
            return EXIT_NO_OUTPUT
        return code if self.open else EXIT_PIPE


def _silence(stream: TextIO) -> None:
    """Point a closed pipe's descriptor at /dev/null, so nothing written later (the
    interpreter's last flush) raises BrokenPipeError again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


async def _ask(settings: Settings, store: Store, conv_id: int, question: Message, *,
               forget_limit: bool = False, usage: bool = False,
               allow: Sequence[str] = (), tools: bool = True,
               attaching: Attaching | None = None) -> int:
    from jarvis_tui.cli_tools import ask_tools

    language = pick_language(settings.language, question.content)
    out = _Output(sys.stdout)
    safe = SafeStream()
    streamed = step_text = False
    counted: list[ev.Usage] = []  # the counts of the attempt under way, when it gave any
    compacted: list[ev.CompactionFinished] = []
    session = ChatSession(settings, store, make_provider, forget_learned_limit=forget_limit,
                          conversation_id=conv_id)
    try:
        if attaching is not None:
            question = _attached_question(store, conv_id, session, attaching, question,
                                          language)
        async with ask_tools(settings, session, allow, lambda line: _say(visible(line)),
                             enabled=tools), aclosing(session.stream_reply(question)) as events:
            async for event in events:
                if isinstance(event, ev.Delta):
                    out.write(safe.feed(event.text))
                    streamed = step_text = True
                    continue
                if isinstance(event, ev.ToolCallsMade) and step_text:
                    out.write(safe.flush() + "\n")  # the next step's text starts on its own line
                    step_text = False
                if isinstance(event, ev.WindowFitted):
                    counted.clear()  # a new attempt: only the answered one's counts are its
                elif isinstance(event, ev.Usage):
                    counted.append(event)
                elif isinstance(event, ev.CompactionFinished):
                    compacted.append(event)
                if isinstance(event, ev.Finished) or streamed and isinstance(event, ev.Failed):
                    out.write(safe.flush() + "\n")
                line = describe(event, language)
                if line:
                    _say(visible(line))  # tool lines name what the model or a server wrote
                if usage and (isinstance(event, ev.Finished)
                              or isinstance(event, ev.Failed) and counted):
                    _say_usage(settings, language, counted, compacted)
                if isinstance(event, ev.Finished):
                    if out.trouble:
                        _say(f"jarvis-tui: standard output {out.trouble}; it is stored in "
                             f"session {conv_id} (`jarvis-tui export {conv_id}` prints it)")
                    return out.status(0)
                if isinstance(event, ev.Failed):
                    _say_what_was_kept(event, printed=streamed and out.open)
                    return out.status(EXIT_FAILED)
    finally:
        await session.aclose()
    return out.status(EXIT_FAILED)


def _say_usage(settings: Settings, language: str, counted: list[ev.Usage],
               compacted: list[ev.CompactionFinished]) -> None:
    """`ask --usage`: the answered request's counts and a compaction the round ran first."""
    summary_model = settings.summary_model or settings.model
    compaction = None
    if compacted and any(c.calls for c in compacted):
        compaction = CompactionCost(
            sum(c.calls for c in compacted), sum(c.cost_prompt_tokens for c in compacted),
            sum(c.cost_completion_tokens for c in compacted), None, None,
            sum(max(0, c.tokens_before - c.tokens_after) for c in compacted), summary_model)
    _say("jarvis-tui: " + terminal_safe(usage_line(
        counted[-1] if counted else None, language, price=price_for(settings, settings.model),
        compaction=compaction, compaction_price=price_for(settings, summary_model))))


def _say_what_was_kept(failed: ev.Failed, *, printed: bool) -> None:
    if failed.message is None:
        return
    if failed.saved:  # a cut reply: worth asking again
        _say("jarvis-tui: the partial reply was kept in the session; run the same command "
             "again to retry")
    elif printed:
        _say("jarvis-tui: the reply above was not saved and this is its only copy: copy it "
             "now, and make room where the session database lives before asking again")


def cmd_sessions(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        conversations = store.list_conversations()
    if not conversations:
        _print("no sessions yet; start one with `jarvis-tui` or `jarvis-tui ask --new TEXT`",
               flush=True)
        return 0
    _print(f"{'ID':>5}  {'UPDATED':16}  {'MSGS':>5}  TITLE")
    for c in conversations:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.updated_at))
        # visible(): a title is a message's first words, and U+202E or tag characters in it
        # would reorder the line or hide words the user should see (as `memory list` shows).
        _print(f"{c.id:>5}  {when:16}  {c.message_count:>5}  {visible(c.title)}")
    _print(end="", flush=True)
    return 0


def _session_id(store: Store, session: int | None, what: str) -> int:
    if session is None:
        latest = store.latest_conversation()
        if latest is None:
            raise CliError(f"there are no sessions to {what} yet")
        return latest.id
    if store.get_conversation(session) is None:
        raise CliError(f"there is no session {session}; `jarvis-tui sessions` lists them")
    return session


def cmd_search(args: argparse.Namespace) -> int:
    from jarvis_tui.core.embed.meaning import for_command
    from jarvis_tui.core.recall.turns import search_turns
    from jarvis_tui.core.tree import path_to

    if not 1 <= args.limit <= SEARCH_LIMIT:
        shown = str(args.limit) if len(str(args.limit)) <= 12 else f"{str(args.limit)[:12]}…"
        raise CliError(f"--limit {shown}: give a number of turns from 1 to {SEARCH_LIMIT:,}")
    if args.all_sessions:
        if args.session is not None:
            raise CliError("--all searches every session and --session one of them: give "
                           "one or the other")
        return _search_all(args)
    settings = load(args)
    with open_store(args) as store:
        conv_id = _session_id(store, args.session, "search")
        # The branch shown, as in the app: replies regenerated since are turns of their own.
        shown = path_to(store.messages(conv_id), store.head(conv_id))
        turns = search_turns(store, conv_id, shown, args.query, args.limit,
                             for_command(store, settings.recall_by_meaning))
    if not turns:
        _print(f"nothing in session {conv_id} matches {args.query!r}", flush=True)
        return 0
    for turn in turns:
        _print_turn(turn)
    _print(end="", flush=True)
    return 0


def _search_all(args: argparse.Namespace) -> int:
    from jarvis_tui.core.embed.meaning import for_command
    from jarvis_tui.core.recall.sessions import search_sessions
    from jarvis_tui.core.safety.redact import redactor

    # Every session's turns on one screen, as recall would send them to another session: with
    # their secrets hidden unless the user turned that off (recall_redact_secrets).
    settings = load(args)
    scrub = redactor(known_secrets(settings)) if settings.recall_redact_secrets else None
    with open_store(args) as store:
        found = search_sessions(store, args.query, args.limit, scrub=scrub,
                                meaning=for_command(store, settings.recall_by_meaning))
    if not found:
        _print(f"nothing in any session matches {args.query!r}", flush=True)
        return 0
    for turn in found:
        _print(visible(f"session {turn.session.id} {turn.label}"))
        _print_turn(turn.turn)
    _print(end="", flush=True)
    return 0


def _print_turn(turn: list[Message]) -> None:
    """A turn a line a message, then a blank line: one screenful of each, safe to print."""
    for msg in turn:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(msg.created_at))
        mark = " [in the summary]" if msg.covered else ""
        text = " ".join(msg.content.split())
        text = text if len(text) <= 200 else text[:199] + "…"
        _print(visible(f"#{msg.id} {when} {msg.role}{mark}: {text}"))
    _print()


def cmd_export(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        conv_id = _session_id(store, args.session, "export")
        data = store.export(conv_id)
    text = (to_json(data, redact=args.redact) + "\n" if args.format == "json"
            else to_markdown(data, redact=args.redact))
    # Safe for a terminal either way (core/store/export.py): an exported file is `cat` later.
    _print(text, end="", flush=True)
    return 0
