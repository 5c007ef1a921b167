"""Layer 2: fold older turns into a running summary with a separate, lightweight LLM call.

The summariser talks to the provider's plain `complete` call and never to the engine's chat
path: a chat round may trigger compaction, so a summary that went through the chat path could
trigger compaction again, without end.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from jarvis_tui.core.details.extract import Detail, omitted
from jarvis_tui.core.details.ledger import entry, split
from jarvis_tui.core.messages import Message, describe_calls, split_turns
from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.providers.errors import ContextOverflow, ProviderError, RetryableError
from jarvis_tui.core.window.fit import truncate_middle
from jarvis_tui.core.window.tokens import TokenCounter

SUMMARY_SYSTEM_PROMPT = """\
You compress a chat transcript into a summary that lets the assistant continue the conversation \
without the original turns. Keep everything that matters for continuing: the user's goals and \
preferences, decisions made, facts, names, numbers, dates, file paths, code identifiers, commands, \
errors, and open questions or to-dos. Fold the previous summary (if given) and the new turns into \
ONE updated summary; drop small talk and repetition. Write in the language the conversation is \
written in (if it mixes languages, use the user's main language). Plain text or short bullet \
points, no preamble, no closing remarks."""

# The summary request that reuses the chat request's cached prefix: the conversation as the
# model last saw it, then this one instruction. Same guidance as the small prompt.
PREFIX_INSTRUCTION = """\
Pause the conversation here and do not answer it. Write an updated summary of this conversation \
so far (the summary in the system message, if there is one, and every turn above) that lets the \
assistant continue without those turns. Keep everything that matters for continuing: the user's \
goals and preferences, decisions made, facts, names, numbers, dates, file paths, code \
identifiers, commands, errors, and open questions or to-dos; drop small talk and repetition. \
Write in the language the conversation is written in (if it mixes languages, use the user's \
main language). Plain text or short bullet points, no preamble, no closing remarks."""

MERGE_NOTE = "These are summaries of consecutive parts of one conversation, oldest first."
ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool result", "system": "System"}

# Style "plain", for the bundled small model (a 0.5B), chosen by bench/local/summary_local.py: short
# wording in the conversation's own language. Sent the standard wording, in English whatever the
# conversation's language, it refused ("do not answer it"), wrote Chinese sessions' summaries in
# English and kept fewer of their facts. At the chat's prefix, as the user's next turn.
PLAIN_PREFIX_INSTRUCTIONS = {
    "en": ("Summarize our conversation so far in a few short lines, so that it can go on without "
           "the turns above. Keep every name, number, date, path, id, phone number and decision "
           "exactly as written, and say what is still open. Write in English. Only the summary."),
    "zh": ("请用几行简短的文字总结我们到目前为止的对话，让对话不看上面的内容也能继续。"
           "所有人名、数字、日期、路径、编号、电话和决定都要原样保留，并写出还没完成的事。"
           "用中文写。只写总结。"),
}
# Its small prompt: one user turn, the material then the instruction. Told in a system message,
# the model took the transcript for its own conversation and answered its last turn instead.
# Four labelled lines keep it from copying the transcript out whole, as it did in Chinese when
# asked for prose; the labels are named, not shown as lines to fill in, which it copied back.
PLAIN_SMALL_INSTRUCTIONS = {
    "en": ("Summarize the conversation above so that it can go on without it. Write four lines "
           "that begin with \"Goal:\", \"Facts:\", \"Decisions:\" and \"Open:\". Under Facts, "
           "copy every name, number, date, path, id and phone number exactly as written. Write "
           "in English."),
    "zh": ("请总结上面的对话，让对话不看原文也能继续。"
           "写四行，分别以“目标：”“事实：”“决定：”“待办：”开头。"
           "“事实：”里照抄所有人名、数字、日期、路径、编号和电话。用中文写。"),
}
PLAIN_WORDS = {
    "en": {"labels": ROLE_LABELS, "colon": ": ", "focus": "Pay special attention to: {}",
           "previous": "Previous summary:", "new": "New turns:", "merge": MERGE_NOTE},
    "zh": {"labels": {"user": "用户", "assistant": "助手", "tool": "工具结果", "system": "系统"},
           "colon": "：", "focus": "特别注意：{}", "previous": "之前的摘要：", "new": "新的对话：",
           "merge": "下面是同一段对话中前后相连的几部分的摘要，按时间先后排列。"},
}
STYLES = ("standard", "plain")

# The follow-up that hands a summary what it left out (summary_repair). Asked of the summary
# alone, not the transcript: the details are given, only their place in the text is wanted.
REPAIR_INSTRUCTION = """\
The summary below leaves out the details listed after it. Rewrite it so that it states each \
listed detail word for word (paths, numbers, commands, names and decisions exactly as written), \
keeping what it already says. Stay as short as it is: shorten other wording if you must, never \
the details. Write in the summary's language. Only the revised summary, no preamble, no closing \
remarks."""

# A summary asked at the chat prefix may be held to this share of its cap when the front leaves
# the window no more room; below it, the small prompt writes the whole summary.
PREFIX_SUMMARY_SHARE = 0.5
# How far our count of that front may fall short of the server's (a calibrated estimate, the
# chat template's framing): the summary's room is kept clear of it, as a refused request costs
# a round trip and then the small prompt anyway.
PREFIX_COUNT_MARGIN = 0.05
PROMPT_SLACK = 64  # wrapper text and chat-template tokens around the material


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
# A Chinese character weighs about what an English word does. Chinese prose full of English terms
# and paths stays above this share, and English that names a person in Chinese stays below it.
ZH_SHARE = 0.4


def language_of(texts: Iterable[str]) -> str:
    """"zh" or "en": the language `texts` are written in, by the share of Chinese characters
    among characters and English words. Code is left out: a Chinese user's log lines and
    commands are English."""
    text = _CODE.sub(" ", "\n".join(texts))
    cjk = len(_CJK.findall(text))
    words = len(_LATIN_WORD.findall(text))
    return "zh" if cjk and cjk >= ZH_SHARE * (cjk + words) else "en"


class SummaryError(Exception):
    """The summariser could not produce a summary; the caller falls back to plain windowing."""


@dataclass
class CompactionPlan:
    evict: list[Message]  # folded into the summary
    keep: list[Message]  # stays verbatim


@dataclass(frozen=True)
class SummaryPrefix:
    wire: list[dict]  # the chat request's front as last sent, ending on a reply
    room: int  # the summary's max_tokens: what the window leaves after the front, the cap at most


def plan_compaction(history: list[Message], keep_recent_turns: int) -> CompactionPlan:
    """Everything older than the last `keep_recent_turns` turns goes, except pinned messages.

    A pinned message stays verbatim; the turn it sits in is otherwise folded in, but a tool
    result is never split from its call, so a pinned tool call keeps its results.
    """
    turns = split_turns(history)
    cut = max(len(turns) - max(keep_recent_turns, 0), 0)
    evict: list[Message] = []
    keep: list[Message] = []
    for turn in turns[:cut]:
        pinned_calls = {c.get("id") for m in turn if m.pinned for c in (m.tool_calls or [])}
        for msg in turn:
            if msg.pinned or (msg.role == "tool" and msg.tool_call_id in pinned_calls):
                keep.append(msg)
            else:
                evict.append(msg)
    keep.extend(m for turn in turns[cut:] for m in turn)
    return CompactionPlan(evict=evict, keep=keep)


def render_transcript(messages: list[Message], labels: dict[str, str] = ROLE_LABELS,
                      colon: str = ": ") -> str:
    lines = []
    for msg in messages:
        label = labels.get(msg.role, msg.role)
        if msg.role == "tool" and msg.name:
            label = f"{label} ({msg.name})"
        text = msg.content
        if msg.tool_calls:
            text = f"{text}\n[{describe_calls(msg.tool_calls)}]".strip()
        lines.append(f"{label}{colon}{text}")
    return "\n\n".join(lines)


def _material(previous: str | None, transcript: str, focus: str | None) -> str:
    parts = []
    if focus:
        parts.append(f"Pay special attention to: {focus}")
    if previous:
        parts.append(f"Previous summary:\n{previous}")
    parts.append(f"New turns:\n{transcript}" if previous else f"Transcript:\n{transcript}")
    return "\n\n".join(parts)


def _plain_material(previous: str | None, transcript: str, lang: str) -> str:
    """The material of a plain small prompt: a first transcript bare, as it was measured. The
    focus goes after it, with the instruction (plain_small_prompt): the model follows what it
    read last."""
    if not previous:
        return transcript
    words = PLAIN_WORDS[lang]
    return f"{words['previous']}\n{previous}\n\n{words['new']}\n{transcript}"


def plain_small_prompt(material: str, lang: str, focus: str | None = None) -> list[dict]:
    """The plain style's small-prompt request: one user turn, the material, then the
    instruction in `lang`."""
    instruction = PLAIN_SMALL_INSTRUCTIONS[lang]
    if focus:
        instruction += "\n" + PLAIN_WORDS[lang]["focus"].format(focus)
    return [{"role": "user", "content": f"{material}\n\n{instruction}"}]


def conversation_language(messages: Iterable[Message | dict], previous: str | None = None
                          ) -> str:
    """The user's main language in `messages` (the previous summary's when they have no words
    of the user's, as when only tool results are folded in)."""
    def text(m: Message | dict) -> tuple[str, str]:
        role, content = (m.role, m.content) if isinstance(m, Message) else (
            m.get("role", ""), m.get("content"))
        return role, content if isinstance(content, str) else ""

    said = list(map(text, messages))
    users = [content for role, content in said if role == "user" and content.strip()]
    return language_of(users or ([previous] if previous else []) + [c for _, c in said])


SUMMARY_OVERFLOW_TRIES = 5
# Where a summary cut to its budget may end: a line, then a sentence, in either language.
_BREAKS = ("\n", "。", "！", "？", "；", ". ", "! ", "? ", "; ")


def fit_summary(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """`text` within `max_tokens`. Servers may ignore max_tokens (a summary longer than what it
    summarises), and each summary is folded into the next, so one left long would grow the
    front of every request without end. The start is kept (a summary leads with the goals and
    decisions), cut at the last line or sentence end that fits, else the last word."""
    if counter.text(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)  # the longest prefix that fits: counts grow with the prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.text(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    head = text[:lo]
    # A boundary in the first half would throw away more than it saves from a broken sentence.
    at = max((i + len(b) for b in _BREAKS if (i := head.rfind(b)) >= 0), default=0)
    if at < lo // 2:
        space = head.rfind(" ")
        at = space if space >= lo // 2 else lo  # CJK has no spaces: a character boundary
    out = head[:at].rstrip()
    while out and counter.text(out) > max_tokens:  # an estimator not monotonic at the edge
        out = out[:len(out) * 9 // 10].rstrip()
    return out


class CalledATool(SummaryError):
    """Offered the chat's tools (for the cache), the summariser called one instead."""


class Summarizer:
    """Produces summaries that fit the summariser's own window, in chunks when they must."""

    def __init__(self, provider: Provider, *, model: str, max_tokens: int, window: int,
                 counter: TokenCounter, retries: int = 2,
                 backoff: Callable[[int, float | None], float] = lambda n, after: after or n,
                 sleep: Callable[[float], Awaitable[object]] | None = None,
                 style: str = "standard"):
        """`style`: "standard", or "plain" for a small model: short instructions in the
        conversation's language (PLAIN_PREFIX_INSTRUCTIONS, PLAIN_SMALL_INSTRUCTIONS)."""
        if style not in STYLES:
            raise ValueError(f"unknown summary style {style!r}")
        self.style = style
        self.language = "en"  # the conversation's, for the plain style: set by each summary
        self.provider = provider
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.model = model
        self.max_tokens = max_tokens
        self.window = window
        self.counter = counter
        self.calls = 0
        # What the summary requests cost: the server's counts where it gave them, else ours.
        self.prompt_tokens = self.completion_tokens = self.cached_tokens = 0
        self.cached_seen = False  # a server that never says what it cached is not shown 0
        self._failed_size = window  # tokens of the last summary request refused as too long

    @property
    def plain(self) -> bool:
        return self.style == "plain"

    def _wrapper_tokens(self) -> int:
        """The instruction around the material of a small prompt."""
        if not self.plain:
            return self.counter.text(SUMMARY_SYSTEM_PROMPT)
        return self.counter.text(PLAIN_SMALL_INSTRUCTIONS[self.language])

    @property
    def input_budget(self) -> int:
        prompt = self._wrapper_tokens() + PROMPT_SLACK
        return max(self.window - self.max_tokens - prompt, 128)

    def _render(self, messages: list[Message]) -> str:
        if not self.plain:
            return render_transcript(messages)
        words = PLAIN_WORDS[self.language]
        return render_transcript(messages, words["labels"], words["colon"])

    async def summarize(self, previous: str | None, messages: list[Message],
                        focus: str | None = None) -> str:
        self.language = conversation_language(messages, previous)
        for _ in range(SUMMARY_OVERFLOW_TRIES):
            try:
                return await self._summarize(previous, messages, focus)
            except ContextOverflow as err:
                # The summariser's real window is smaller than we thought: learn it and re-chunk.
                # A server that does not name it still told us one thing: the request that
                # failed was too big, so the window is below its size.
                smaller = err.limit if err.limit and err.limit < self.window else None
                self.window = smaller or int(min(self.window * 0.7, self._failed_size * 0.8))
                if self.window < 256:
                    break
        raise SummaryError("the summary request did not fit the model's context window")

    async def _summarize(self, previous: str | None, messages: list[Message],
                         focus: str | None) -> str:
        material = self._material(previous, self._render(messages), focus)
        if self.counter.text(material) <= self.input_budget:
            return await self._call(material, focus)
        # Too big for one request: summarise chunks on their own, then merge the parts.
        parts = [await self._call(self._material(None, chunk, focus), focus)
                 for chunk in self._chunks(messages)]
        return await self._merge(previous, parts, focus)

    def _material(self, previous: str | None, transcript: str, focus: str | None) -> str:
        if self.plain:  # the focus goes with the instruction, after the material
            return _plain_material(previous, transcript, self.language)
        return _material(previous, transcript, focus)

    def _chunks(self, messages: list[Message]) -> list[str]:
        limit = self.input_budget - 32
        chunks: list[str] = []
        current: list[str] = []
        used = 0
        for msg in messages:
            text = self._render([msg])
            size = self.counter.text(text)
            if size > limit:
                text, _ = truncate_middle(text, limit, self.counter)
                size = self.counter.text(text)
            if current and used + size > limit:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            current.append(text)
            used += size
        if current:
            chunks.append("\n\n".join(current))
        return chunks

    async def _merge(self, previous: str | None, parts: list[str], focus: str | None) -> str:
        words = PLAIN_WORDS[self.language] if self.plain else PLAIN_WORDS["en"]
        note = words["merge"]
        texts = ([f"{words['previous']}\n{previous}"] if previous else []) + parts
        while True:
            material = note + "\n\n" + "\n\n---\n\n".join(texts)
            if focus and not self.plain:
                material = f"Pay special attention to: {focus}\n\n{material}"
            if self.counter.text(material) <= self.input_budget or len(texts) == 1:
                if self.counter.text(material) > self.input_budget:
                    material, _ = truncate_middle(material, self.input_budget, self.counter)
                return await self._call(material, focus)
            # Still too big: merge neighbours pairwise, which halves the list each pass.
            pairs = [texts[i:i + 2] for i in range(0, len(texts), 2)]
            texts = [await self._call(note + "\n\n" + "\n\n---\n\n".join(
                truncate_middle(t, self.input_budget // 2, self.counter)[0] for t in pair))
                if len(pair) > 1 else pair[0] for pair in pairs]

    async def summarize_prefix(self, prefix: list[dict], focus: str | None = None,
                               tools: list[dict] | None = None,
                               max_tokens: int | None = None) -> str:
        """The summary asked at the end of the chat request's own prefix (system message,
        summary, the turns to fold in, as last sent): the provider's prompt cache has all of it,
        so only the instruction is new. `tools`: the definitions the chat requests carry,
        which servers put before the messages, so without them nothing of the front matches
        the cache. `max_tokens`: the room the window leaves after the front, when that is less
        than the cap. A ContextOverflow, or a tool call for an answer, is the caller's cue to
        fall back to the small prompt."""
        if self.plain:
            self.language = conversation_language(prefix)
            instruction = PLAIN_PREFIX_INSTRUCTIONS[self.language]
            if focus:
                instruction += "\n\n" + PLAIN_WORDS[self.language]["focus"].format(focus)
        else:
            instruction = PREFIX_INSTRUCTION
            if focus:
                instruction = f"{instruction}\n\nPay special attention to: {focus}"
        return await self._request([*prefix, {"role": "user", "content": instruction}], tools,
                                   max_tokens=max_tokens)

    async def repair(self, summary: str, omitted_details: Sequence[Detail]) -> str:
        """`summary` revised by one more request to state `omitted_details` word for word,
        within the same length. The ledger keeps those details in any case, so a repair is
        never a condition of the compaction: a failed one, or one that states none of them,
        leaves `summary` as it was."""
        summary, _ = split(summary)  # a copied ledger section is rebuilt after, not repaired
        lines = [entry(d) for d in omitted_details]
        head = f"{REPAIR_INSTRUCTION}\n\nSummary:\n{summary}\n\nDetails it leaves out:\n"
        while lines and self.counter.text(head + "\n".join(lines)) > self.input_budget:
            lines.pop()  # the newest go first: the ledger keeps what is not listed
        listed = list(omitted_details)[:len(lines)]
        if not listed:
            return summary
        try:
            revised = await self._request([
                {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
                {"role": "user", "content": head + "\n".join(lines)}])
        except (SummaryError, ProviderError):
            return summary
        # A model that ignored the request wrote its summary from less than the first did.
        return summary if len(omitted(listed, split(revised)[0])) == len(listed) else revised

    async def _call(self, material: str, focus: str | None = None) -> str:
        if self.plain:
            messages = plain_small_prompt(material, self.language, focus)
        else:
            messages = [{"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
                        {"role": "user", "content": material}]
        try:
            return await self._request(messages)
        except ContextOverflow:
            self._failed_size = (self.counter.text(material) + self.max_tokens
                                 + self._wrapper_tokens())
            raise

    async def _request(self, messages: list[dict], tools: list[dict] | None = None,
                       max_tokens: int | None = None) -> str:
        attempt = 0
        more = {"tools": tools} if tools else {}
        cap = min(max_tokens or self.max_tokens, self.max_tokens)
        while True:
            self.calls += 1
            try:
                # The window goes along for servers that need to be told it (Ollama's num_ctx).
                result = await self.provider.complete(messages, model=self.model,
                                                      max_tokens=cap,
                                                      context_window=self.window, **more)
                break
            except ContextOverflow:
                raise  # the caller's to handle: a smaller window, or the small prompt
            except RetryableError as err:
                # A 429 or a 502 should not cost the user a compaction: a short, bounded retry.
                attempt += 1
                if attempt > self.retries or self.sleep is None:
                    raise SummaryError(err.message) from err
                await self.sleep(self.backoff(attempt, err.retry_after))
            except ProviderError as err:
                raise SummaryError(err.message) from err
        text = result.text.strip()
        self.prompt_tokens += (result.prompt_tokens if result.prompt_tokens is not None else
                               sum(self.counter.text(m.get("content") or "") for m in messages))
        self.completion_tokens += (result.completion_tokens if result.completion_tokens
                                   is not None else self.counter.text(text))
        self.cached_tokens += result.cached_tokens or 0
        self.cached_seen = self.cached_seen or result.cached_tokens is not None
        if not text and getattr(result, "tool_calls", ()):
            raise CalledATool("the summariser asked for a tool instead of summarising")
        if not text:
            raise SummaryError("the summariser returned an empty summary")
        return fit_summary(text, cap, self.counter)
