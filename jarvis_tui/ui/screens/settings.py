"""The settings screen (F3): edit the budget, model and look, checked as you type, saved to TOML.

Every check is config's own (with_overrides, validate) plus the budget arithmetic, so the screen
can never save something the loader would later refuse. Only the keys the user changed are
written, so values that came from the environment or the command line stay off the disk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static

from jarvis_tui.core.budget import MIN_BUDGET, Budget, resolve_context_window
from jarvis_tui.core.settings.config import (
    ConfigError,
    Settings,
    config_path,
    update_settings_file,
    validate,
    with_overrides,
)
from jarvis_tui.core.settings.schema import Range, on_screen
from jarvis_tui.texts.i18n import Texts
from jarvis_tui.ui.actions import keys_problem
from jarvis_tui.ui.languages import ui_language
from jarvis_tui.ui.screens.dialog import dialog_css

# The fields as the schema declares them: labels, hints, ranges and the words for what each
# expects live there, in both languages; this module only lays them out.
FIELDS = {setting.name: setting for setting in on_screen()}
INPUT_KEYS = tuple(k for k, s in FIELDS.items() if s.shown and s.shown.look != "select")
SELECT_KEYS = tuple(k for k, s in FIELDS.items() if s.shown and s.shown.look == "select")


def _look(key: str) -> str:
    shown = FIELDS[key].shown
    return shown.look if shown else "text"


def _percent_range(key: str) -> tuple[float, float]:
    """The check's range as percentages (a fraction 0.1 is typed 10)."""
    check = FIELDS[key].check
    assert isinstance(check, Range), f"{key} is shown as a percentage, so its check is a range"
    return round(check.lo * 100, 6), round(check.hi * 100, 6)


SETTINGS_TEXTS = Texts(
    en={
        "title": "Settings",
        "file": "Settings file: {path}",
        "save": "Save (ctrl+s)",
        "cancel": "Cancel (Esc)",
        # {reason} is config's own words; Chinese rebuilds the sentence from {need} and {got}.
        "bad_field": "{reason}",
        # A percent field's range and example come from the schema (its check and default).
        "bad_percent": "expected a percentage between {lo} and {hi} ({example} means "
                       "{fraction}), got {got}",
        "pinned": "Pinned messages: {n}, {tokens} tokens, always sent in full; they take "
                  "their room from the budget.",
        "pinned_none": "Pinned messages: none (/pin or /recall pins one).",
        "too_small": "the reserves must leave a positive budget: {window} − {response} − "
                     "{system} = {tokens} tokens; at least {min} are needed",
        "budget": "Budget: {window} − {response} − {system} = {tokens} tokens, "
                  "compacting at {at} tokens",
        "budget_low": "Budget: {window} − {response} − {system} = {tokens} tokens",
        "src_known model": " (window of the known model)",
        "src_default": " (default window: model not known)",
        "src_configured": "",
        "budget_unknown": "Budget: fix the marked fields first",
        "not_saved": "Not saved: {problems}",
        "item": "{label}: {problem}",
        "sep": "; ",
        "write_failed": "Could not save: {error}",
    },
    zh={
        "title": "设置",
        "file": "设置文件：{path}",
        "save": "保存 (ctrl+s)",
        "cancel": "取消 (Esc)",
        "bad_field": "应为{need}，当前为 {got}",
        "bad_percent": "应为 {lo} 到 {hi} 之间的百分数（{example} 即 {fraction}），当前为 {got}",
        "pinned": "已固定的消息：{n} 条，{tokens} 个 token，始终完整发送，占用上面的预算。",
        "pinned_none": "已固定的消息：无（可用 /pin 或 /recall 固定）。",
        "too_small": "预留之后的预算必须为正：{window} − {response} − {system} = {tokens} "
                     "个 token；至少需要 {min} 个",
        "budget": "预算：{window} − {response} − {system} = {tokens} 个 token，"
                  "用到 {at} 个 token 时压缩",
        "budget_low": "预算：{window} − {response} − {system} = {tokens} 个 token",
        "src_known model": "（窗口取自已知模型）",
        "src_default": "（默认窗口：未知模型）",
        "budget_unknown": "预算：请先修正标出的字段",
        "not_saved": "未保存：{problems}",
        "item": "{label}：{problem}",
        "sep": "；",
        "write_failed": "保存失败：{error}",
    },
)


def _num(n: int) -> str:
    return str(n).replace("-", "−")  # a real minus sign reads better next to the − operators


def _shown(settings: Settings, key: str) -> str:
    value = getattr(settings, key)
    if _look(key) == "percent":
        return f"{round(value * 100, 4):g}"
    return str(value)


@dataclass
class FormState:
    """What the form holds right now: typed values, problems per field and across fields."""

    values: dict[str, Any] = field(default_factory=dict)
    field_problems: dict[str, str] = field(default_factory=dict)
    cross_problems: list[str] = field(default_factory=list)
    budget_line: str = ""

    @property
    def ok(self) -> bool:
        return not self.field_problems and not self.cross_problems


class SettingsScreen(ModalScreen[Settings | None]):
    """Dismisses with the saved Settings, or None on cancel."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    DEFAULT_CSS = dialog_css("SettingsScreen", max_width=96, max_height=44,
                             border_title=False) + """
    SettingsScreen #title { text-style: bold; color: $primary; }
    SettingsScreen #path { color: $text-muted; }
    SettingsScreen #body { height: 1fr; }
    SettingsScreen .label { margin-top: 1; text-style: bold; }
    SettingsScreen .hint { color: $text-muted; }
    SettingsScreen Input, SettingsScreen Select { margin-right: 1; }
    SettingsScreen Input { background: $boost; }
    SettingsScreen Input:focus { background-tint: $accent 15%; }
    SettingsScreen Input.bad { background-tint: $error 25%; }
    SettingsScreen .error { color: $error; height: auto; }
    SettingsScreen .error.-empty { display: none; }
    SettingsScreen #budget { color: $secondary; height: auto; }
    SettingsScreen #pinned { color: $text-muted; height: auto; }
    SettingsScreen #status { color: $error; height: auto; }
    SettingsScreen #buttons { height: auto; align-horizontal: right; }
    SettingsScreen #buttons Button { margin-left: 2; }
    """

    def __init__(self, settings: Settings, config_file: Path | None, themes: list[str],
                 pinned: tuple[int, int] = (0, 0)):
        super().__init__()
        self.pinned = pinned  # (messages, tokens) pinned in the open session
        self.settings = settings
        self.config_file = config_file
        self.themes = list(themes)
        if settings.theme not in self.themes:
            self.themes.append(settings.theme)  # the Select must be able to show the current one
        self._original_theme: str | None = None
        self._shown = {key: _shown(settings, key) for key in INPUT_KEYS}

    # -- layout ----------------------------------------------------------------------------------

    def _t(self, key: str, **values: object) -> str:
        return SETTINGS_TEXTS(ui_language(self.app), key, **values)

    def compose(self) -> ComposeResult:
        path = self.config_file if self.config_file is not None else config_path()
        with Vertical(id="dialog"):
            yield Static(self._t("title"), id="title", markup=False)
            yield Static(self._t("file", path=path), id="path", markup=False)
            with VerticalScroll(id="body"):
                for key in INPUT_KEYS:
                    yield from self._labels(key)
                    yield Input(self._shown[key], id=f"field-{key}", compact=True)
                    yield Static("", id=f"error-{key}", classes="error -empty", markup=False)
                for key in SELECT_KEYS:
                    yield from self._labels(key)
                    options = self._options(key)
                    value = getattr(self.settings, key)
                    yield Select(
                        options, allow_blank=False, compact=True, id=f"field-{key}",
                        value=value if value in [v for _, v in options] else FIELDS[key].default)
            yield Static("", id="budget", markup=False)
            n, tokens = self.pinned
            yield Static(self._t("pinned", n=n, tokens=f"{tokens:,}") if n
                         else self._t("pinned_none"), id="pinned", markup=False)
            yield Static("", id="problems", classes="error -empty", markup=False)
            yield Static("", id="status", classes="-empty", markup=False)
            with Horizontal(id="buttons"):
                yield Button(self._t("save"), id="save", variant="primary")
                yield Button(self._t("cancel"), id="cancel")

    def _label(self, key: str) -> str:
        shown = FIELDS[key].shown
        return shown.label(ui_language(self.app)) if shown else key

    def _labels(self, key: str) -> ComposeResult:
        shown = FIELDS[key].shown
        hint = shown.hint(ui_language(self.app)) if shown else ""
        if _look(key) == "percent":
            lo, hi = _percent_range(key)
            hint = hint.format(range=f"{lo:g}-{hi:g}")
        yield Static(self._label(key), classes="label", markup=False)
        yield Static(hint, classes="hint", markup=False)

    def _options(self, key: str) -> list[tuple[str | Content, str]]:
        """A select's choices: the schema's, in its words, or for the theme the app's themes."""
        shown = FIELDS[key].shown
        if shown and shown.choice_labels:
            lang = ui_language(self.app)
            return [(words(lang), value) for value, words in shown.choice_labels.items()]
        return [(Content(name), name) for name in self.themes]

    def on_mount(self) -> None:
        self._original_theme = self.app.theme
        self.query_one("#field-context_window", Input).focus()
        self._refresh()

    # -- checking --------------------------------------------------------------------------------

    def _value(self, key: str, text: str) -> tuple[Any, str | None]:
        """The field's typed value, or the reason it is wrong (in the interface language)."""
        if text == self._shown[key]:
            return getattr(self.settings, key), None  # untouched: never a change, even rounded
        setting = FIELDS[key]
        if _look(key) == "percent":
            lowest, highest = _percent_range(key)
            raw = text.strip().removesuffix("%").strip()
            try:
                percent = float(raw)
            except ValueError:
                percent = math.nan
            if not (math.isfinite(percent) and lowest <= percent <= highest):
                return None, self._t("bad_percent", lo=f"{lowest:g}", hi=f"{highest:g}",
                                     example=f"{setting.default * 100:g}",
                                     fraction=f"{setting.default:.2f}", got=repr(text.strip()))
            text = str(percent / 100)
        elif _look(key) == "text":
            text = text.strip()
        try:
            checked = with_overrides(self.settings, **{key: text})
        except ConfigError as e:
            reason = str(e).removeprefix(f"key '{key}': ")
            need = setting.expected(ui_language(self.app))
            return None, self._t("bad_field", reason=reason, need=need, got=repr(text.strip()))
        return getattr(checked, key), None

    def check(self) -> FormState:
        """Read every field and check it alone, then together."""
        state = FormState()
        for key in INPUT_KEYS:
            value, problem = self._value(key, self.query_one(f"#field-{key}", Input).value)
            if problem:
                state.field_problems[key] = problem
            else:
                state.values[key] = value
        for key in SELECT_KEYS:
            value = self.query_one(f"#field-{key}", Select).value
            state.values[key] = value if isinstance(value, str) else getattr(self.settings, key)
        if state.field_problems:
            state.budget_line = self._t("budget_unknown")
            return state

        candidate = with_overrides(self.settings, **state.values)
        window, source = resolve_context_window(candidate.context_window, candidate.model)
        budget = Budget(window, candidate.response_reserve, candidate.system_reserve,
                        candidate.compact_threshold)
        numbers = dict(window=_num(window), response=_num(budget.response_reserve),
                       system=_num(budget.system_reserve), tokens=_num(budget.tokens))
        if budget.tokens < MIN_BUDGET:
            state.cross_problems.append(self._t("too_small", min=MIN_BUDGET, **numbers))
            line = self._t("budget_low", **numbers)
        else:
            line = self._t("budget", at=_num(budget.threshold_tokens), **numbers)
        state.budget_line = line + self._t(f"src_{source}")
        # validate() repeats the budget check (in English) when the window is set; say it once.
        said = set(budget.problems())
        state.cross_problems += [p for p in validate(candidate) if p not in said]
        # The [keys] table is never edited (or written) here; a bad one must still not be saved.
        keys = keys_problem(candidate.keys)
        if keys:
            state.cross_problems.append(keys)
        return state

    def changes(self, state: FormState | None = None) -> dict[str, Any]:
        """The keys whose value differs from the settings the screen was opened with."""
        state = state or self.check()
        return {k: v for k, v in state.values.items() if v != getattr(self.settings, k)}

    def _refresh(self) -> FormState:
        state = self.check()
        for key in INPUT_KEYS:
            problem = state.field_problems.get(key, "")
            self._say(f"#error-{key}", problem)
            self.query_one(f"#field-{key}", Input).set_class(bool(problem), "bad")
        self.query_one("#budget", Static).update(state.budget_line)
        self._say("#problems", "\n".join(state.cross_problems))
        self.query_one("#save", Button).disabled = not state.ok
        return state

    def _say(self, selector: str, text: str) -> None:
        widget = self.query_one(selector, Static)
        widget.update(text)
        widget.set_class(not text, "-empty")

    def _problem_summary(self, state: FormState) -> str:
        parts = [self._t("item", label=self._label(k), problem=p)
                 for k, p in state.field_problems.items()]
        return self._t("sep").join(parts + state.cross_problems)

    # -- events and actions ----------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._say("#status", "")  # an old save error no longer describes what is typed
        self._refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "field-theme":
            name = event.value
            if isinstance(name, str) and name in self.app.available_themes \
                    and name != self.app.theme:
                self.app.theme = name
        self._refresh()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        elif event.button.id == "cancel":
            self.action_cancel()

    def action_save(self) -> None:
        state = self._refresh()
        if not state.ok:
            self._say("#status", self._t("not_saved", problems=self._problem_summary(state)))
            return
        changes = self.changes(state)
        if changes:
            try:
                update_settings_file(self.config_file, changes)
            except (ConfigError, OSError) as e:
                self._say("#status", self._t("write_failed", error=e))
                return
        self.dismiss(with_overrides(self.settings, **changes))

    def action_cancel(self) -> None:
        if self._original_theme is not None and self.app.theme != self._original_theme:
            self.app.theme = self._original_theme
        self.dismiss(None)
