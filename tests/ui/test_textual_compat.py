"""Textual's private API is reached only through ui/textual_compat.py, and each use has a fallback:
a Textual 8.x that renamed one costs that one feature, never the app or a reply."""

from __future__ import annotations

import pathlib
import re

from textual.widgets import Markdown

from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui import textual_compat
from jarvis_tui.ui.languages import translate_bindings
from jarvis_tui.ui.widgets import settled
from jarvis_tui.ui.widgets.conversation import Conversation
from tests.ui.app_helpers import views, wait_for
from tests.ui.test_streaming_settled import REPLY, drawn, stalled

UI = pathlib.Path(textual_compat.__file__).parent


def test_private_textual_names_appear_only_in_the_compat_module():
    private = re.compile(r"\bfrom textual\._|\._(anchor_released|bindings|compositor|"
                         r"render_chops)\b")
    found = [f"{path.relative_to(UI)}:{n}" for path in UI.rglob("*.py")
             if path.name != "textual_compat.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)]
    assert found == []


def _textual_private_names() -> set[str]:
    """Private attributes of the Textual classes ours derive from, as classes and instances."""
    from textual.app import App
    from textual.containers import Vertical, VerticalScroll
    from textual.screen import ModalScreen, Screen
    from textual.widget import Widget
    from textual.widgets import Input, Select, Static, TextArea

    names: set[str] = set()
    for cls in (App, Screen, ModalScreen, Widget, Vertical, VerticalScroll, Static, Markdown,
                TextArea, Input, Select):
        for base in cls.__mro__:
            names.update(k for k in vars(base) if k.startswith("_") and not k.startswith("__"))
    for widget in (Widget(), Static(), Markdown()):
        names.update(k for k in vars(widget) if k.startswith("_") and not k.startswith("__"))
    return names


def test_no_module_but_the_compat_one_reads_a_private_textual_name():
    """Any `._name` Textual has, read or called outside the compat module (super()._on_key
    included), unless it is a name of our own that merely shares the spelling."""
    import ast

    textual = _textual_private_names()
    found = []
    for path in UI.rglob("*.py"):
        if path.name == "textual_compat.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ours = {n.name for n in ast.walk(tree)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        ours |= {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AnnAssign)
                 for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                 if isinstance(t, ast.Attribute)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in textual:
                continue
            via_super = isinstance(node.value, ast.Call) and getattr(
                node.value.func, "id", "") == "super"
            if via_super or node.attr not in ours:
                found.append(f"{path.relative_to(UI)}:{node.lineno}: .{node.attr}")
    assert found == []


def test_the_fallbacks_answer_when_textual_has_no_such_name():
    class Bare:
        pass

    bare = Bare()
    assert textual_compat.anchor_released(bare) is False  # type: ignore[arg-type]
    assert textual_compat.bindings_by_key(bare) is None
    # A screen whose bindings Textual keeps elsewhere keeps its descriptions, no error.
    translate_bindings(bare, "zh", Texts(en={"key_quit": "Quit"}, zh={"key_quit": "退出"}))


async def test_a_reply_streams_whole_when_the_compositor_is_gone(fake_server, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setattr(textual_compat, "Compositor", None)
    async with stalled(fake_server, tmp_path, 0.5) as (pilot, view):
        assert drawn(view) == (0, 0)  # nothing settled: every block stays live
        assert settled.settle(view.query_one(Markdown)) is None
        fake_server.resume.set()
        await wait_for(pilot, lambda: pilot.app.chat.reply.question is None, "the reply ends")
        await pilot.pause()
        assert views(pilot.app)[-1].query_one(Markdown).source == REPLY


async def test_with_todays_textual_every_feature_is_on(fake_server, tmp_path):
    assert textual_compat.Compositor is not None
    async with stalled(fake_server, tmp_path, 0.5) as (pilot, view):
        assert drawn(view)[0] >= 1  # finished blocks drawn once
        # A Textual that renamed these fails here, not in front of a user.
        assert textual_compat.bindings_by_key(pilot.app.chat)
        assert hasattr(pilot.app.chat.query_one(Conversation), "_anchor_released")
