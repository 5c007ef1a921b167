"""What of the user's own words looks worth remembering across sessions: a preference, a standing
instruction, a name and role, a decision, a fact about where things are; in English and Chinese.

Read from the turns a compaction folds in, without a model: a suggestion only, which the user
accepts or dismisses, so a sentence missed costs one /remember and one wrongly offered costs one
key. Only what the user typed is read (typed_by_user): never a reply or a tool's result, never
what was pasted (a vendor's document saying "always run ..." is not the user's wish, however
much it reads like prose), never a quoted block. Of that, pasted-looking code, logs, JSON and
traces are left out by their shape too (details/blocks.py), and so are questions ("should we
always use tabs?") and one-off requests ("please fix the typo"), which have the words of a
preference but not its lasting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from jarvis_tui.core.details.blocks import code_like
from jarvis_tui.core.details.extract import NOT_NAMES, SURNAMES, prose_of
from jarvis_tui.core.messages import Message
from jarvis_tui.core.pasted import typed_text

MAX_CHARS = 200  # one sentence; a longer one is a paragraph, not an entry
MIN_CHARS = 4

# A sentence ends at . ! ? followed by a space, at 。！？ and at a line break.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s|$)|[。！？]|$)")
_QUESTION = re.compile(
    r"[?？]\s*$|[吗呢么]\s*[。.]?\s*$|是不是|要不要|能不能|可不可以|"
    r"^(?:why|what|how|should|shall|do|does|did|can|could|would|will|is|are|was|were|which|"
    r"when|where|who|whose|whom|have|has|any idea)\b", re.IGNORECASE)
# A command typed as one (`git commit -m "always ..."`): its words are arguments, not prose.
_COMMAND = re.compile(
    r"^\s*(?:\$\s*)?(?:git|npm|pnpm|yarn|pip3?|uv|python3?|docker|kubectl|cargo|curl|wget|ssh|"
    r"scp|systemctl|journalctl|sudo|apt(?:-get)?|brew|psql|mysql|redis-cli|helm|terraform|grep|"
    r"rg|sed|awk|tar|chmod|chown|export|echo|cat|ls|cd|rm|cp|mv)\s+\S")
# A quoted line ("> ..."), as mail and Markdown quote someone else's words.
_QUOTED = re.compile(r"^\s*[>＞]")


def _name_en(group: str) -> str:
    return rf"(?P<{group}>[A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+)?)"


# A decision not made yet ("we still need to decide", "我们还没决定") is none.
_UNDECIDED = re.compile(
    r"还没|没有?(?:决定|定|商定|确定|敲定)|尚未|未(?:决定|定)"
    r"|\b(?:not|nothing) yet\b|\byet\W*$|\bundecided\b"
    r"|\b(?:haven't|have not|hasn't|has not|didn't|did not) (?:\w+ )?"
    r"(?:decided|decide|agreed|agree|chosen|choose|settled|picked)\b"
    r"|\b(?:need|have|yet) to (?:decide|choose|pick|agree|settle)\b"
    r"|\bstill (?:deciding|debating|discussing)\b", re.IGNORECASE)
_ROLES_EN = (
    r"(?:lead|manager|engineer|developer|dev|designer|owner|admin|administrator|SRE|DBA|"
    r"architect|PM|CTO|CEO|CFO|COO|VP|founder|co-?founder|scientist|analyst|maintainer|intern|"
    r"student|teacher|professor|researcher|consultant|tester|QA|writer|editor|director|head|"
    r"on-?call|doctor|nurse|lawyer|accountant|boss|reviewer|contact|point of contact|"
    r"product owner|tech lead|team lead|expert|specialist|officer|coordinator)s?")
_ROLES_ZH = (r"(?:负责人|经理|工程师|开发|架构师|设计师|产品|运维|测试|老师|学生|主管|总监|组长|"
             r"老板|创始人|研究员|医生|律师|会计|专家|顾问|对接人|联系人|owner|leader|[A-Z]{2,4})")
_CJK_NAME = rf"(?:{SURNAMES})[\u4e00-\u9fff]{{1,2}}?"

_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("decision", re.compile(
        r"(?<!what )(?<!whether )(?<!if )\bwe(?:'ve| have)? (?:finally |just |already )?"
        r"(?:decided|agreed|chose|settled on|went with|picked)\b"
        r"|\bwe(?:'re| are| will|'ll) (?:go(?:ing)? with|stick(?:ing)? with|switch(?:ing)? to)\b"
        r"|\b(?:the|our) decision (?:is|was)\b"
        r"|(?:我们|咱们|大家|团队|最后|最终|已经)[^，。,]{0,4}?(?:决定|定了|商定|敲定|确定了?)"
        r"|(?:决定|定了|敲定)(?:用|采用|使用|改用|选用|换成)"
        r"|我们(?:改用|选用|采用|换成)", re.IGNORECASE)),
    ("person", re.compile(
        rf"^(?:I'm|I am) (?:the|a|an|our|your) (?:[\w-]+ ){{0,3}}?{_ROLES_EN}\b"
        r"|^(?i:my name is|I work (?:at|for|on|in|with))\b"
        rf"|^{_name_en('name')} is (?:our|my|the|a|an) (?:[\w-]+ ){{0,3}}?{_ROLES_EN}\b"
        rf"|^{_name_en('name2')} (?:owns|maintains|leads|runs|manages|handles|approves|reviews|"
        r"is responsible for|is in charge of|is on call|is on-call)\b"
        r"|\b[Mm]y (?:manager|boss|lead|tech lead|team lead|colleague|teammate|co-?founder|"
        r"partner|PM|mentor|advisor|supervisor) is [A-Z]"
        rf"|^我是[^，。,]{{0,12}}?{_ROLES_ZH}|^我(?:叫|的名字(?:是|叫))|^我在[^，。,]{{1,12}}(?:工作|上班)"
        rf"|^{_CJK_NAME}是(?:我们|咱们|我的|我们的|咱们的|公司的|团队的)?[^，。,]{{0,10}}?{_ROLES_ZH}"
        rf"|^{_CJK_NAME}(?:负责|主管|管)")),
    ("preference", re.compile(
        r"\bI (?:really |much |strongly |generally |usually )?(?:prefer|like|love|hate|dislike|"
        r"don't like|do not like|can't stand|enjoy)\b"
        r"(?! (?:this|that|it|these|those|your|the answer|the idea)\b)"
        r"|\bI(?:'d| would) (?:rather|prefer)\b|\bmy (?:favou?rite|preferred)\b"
        r"|^I (?:usually|normally|mostly|tend to) (?:use|work|write|deploy|code|run|go with)\b"
        r"|我(?:比较|更|很|最|一直|特别|还是)?(?:喜欢|偏好|倾向于?|习惯|讨厌|不喜欢|偏爱)"
        r"(?!这|那|你)", re.IGNORECASE)),
    ("instruction", re.compile(
        r"^(?:please,? )?(?:always|never)\b(?! mind)"
        r"|\b(?:please|you should|you must|make sure to) (?:always|never)\b"
        # "In the future we might..." and "it fails every time" are no instructions: these
        # words make one at the start of a sentence, or said to "you".
        r"|\b(?:from now on|going forward|from here on)\b"
        r"|^(?:in (?:the )?future|by default|for all (?:future )?(?:answers|replies))\b,?"
        r"(?! (?:we|I|it|this|that|they|there|he|she)\b)"
        r"|\b(?:every time|whenever|each time) you\b"
        r"|\b(?:answer|reply|respond|write|talk|speak)(?: to me)? (?:only )?in (?:English|Chinese"
        r"|Mandarin|Japanese|Korean|French|German|Spanish|simplified Chinese)\b"
        r"|^call me\b|^address me as\b"
        r"|^(?:please,? )?(?:keep|make|give|write|format|put|start|end|limit) (?:\w+ ){0,2}?"
        r"(?:answers|replies|responses|explanations)\b"
        r"|(?:以后|今后|从现在起|从今以后|往后)(?!再)"
        r"|^(?:每次|每当)[^，。,]*(?:你|时|的时候)"
        r"|(?:请|你|要)\s*(?:总是|始终|一律|永远|一直)"
        r"|(?:请|都|要)?(?:用|使用|以)[^，。,]{0,6}?(?:中文|英文|英语|汉语|日语)(?:来)?(?:回答|回复|交流|写)"
        r"|(?:回答|回复)[^，。,]{0,4}?(?:用|使用)(?:中文|英文|英语|汉语)"
        r"|(?:回答|回复)的?(?:时候|时)"
        r"|叫我|称呼我", re.IGNORECASE)),
    ("fact", re.compile(
        r"^our [\w -]{1,40}? (?:is|are) (?:in|on|at|hosted|deployed|running|located|based|"
        r"called|named)\b"
        r"|^我们的[^，。,]{1,12}?(?:部署在|位于|放在|托管在|运行在|跑在|设在|叫做?|名叫)",
        re.IGNORECASE)),
]


def typed_by_user(message: Message) -> str:
    """What of `message` the user typed, to read for suggestions: "" for a reply or a tool's
    result, and the pasted spans of a user's message as line breaks."""
    if message.role != "user":
        return ""
    return typed_text(message.content, message.pasted)


def durable(texts: Iterable[str]) -> list[tuple[str, str]]:
    """(kind, sentence) for each sentence of `texts` (the user's messages) that looks worth
    remembering, in order, each once. The sentence is the user's own words, whole."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for text in texts:
        for sentence in _sentences(text):
            kind = _kind(sentence)
            if kind is not None and sentence not in seen:
                seen.add(sentence)
                found.append((kind, sentence))
    return found


def _sentences(text: str) -> Iterable[str]:
    for line in prose_of(text).splitlines():
        if not line.strip() or _QUOTED.match(line) or code_like(line) or _COMMAND.match(line):
            continue
        for m in _SENTENCE.finditer(line):
            sentence = m.group(0).strip()
            if MIN_CHARS <= len(sentence) <= MAX_CHARS:
                yield sentence


def _kind(sentence: str) -> str | None:
    if _QUESTION.search(sentence):
        return None
    for kind, pattern in _KINDS:
        m = pattern.search(sentence)
        if m is None:
            continue
        name = m.groupdict().get("name") or m.groupdict().get("name2")
        if name and name.split()[0] in NOT_NAMES:
            continue
        if kind == "decision" and _UNDECIDED.search(sentence):
            return None
        return kind
    return None
