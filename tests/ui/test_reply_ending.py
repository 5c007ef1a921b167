"""How a failed round ends on screen, chosen in one place (ui/screens/chat/reply.py) from the
reply's state and what the worker said: the six ends the chat screen had as exits of one
handler, each pinned here; the screen tests drive them through the app."""

from __future__ import annotations

from jarvis_tui.core.messages import Message
from jarvis_tui.texts.chat_texts import BRANCH_TEXTS, CHAT_TEXTS, TOOL_TEXTS
from jarvis_tui.ui.posted import ReplyFailed
from jarvis_tui.ui.screens.chat.reply import Reply, failure_ending

PARTIAL = Message("assistant", "half a rep")
ERROR = "HTTP 503: The server is overloaded"


def failed(**kw) -> ReplyFailed:
    return ReplyFailed(1, kw.pop("error", ERROR), user_text="what failed?", **kw)


def asked() -> Reply:
    reply = Reply()
    reply.start(Message("user", "what failed?"), None)
    return reply


def test_stopped_with_text_keeps_it():
    end = failure_ending(failed(stopped=True, partial=PARTIAL, error=""), asked(), "en")
    assert end.partial is PARTIAL and not end.restore and not end.show_branch
    assert end.notes == ((CHAT_TEXTS("en", "stopped_partial"), "warning"),)


def test_stopped_in_a_tool_round_restores_nothing():
    reply = asked()
    reply.tool_step()
    end = failure_ending(failed(stopped=True, error=""), reply, "zh")
    assert end.notes == ((TOOL_TEXTS("zh", "stopped_tools"), "warning"),) and not end.restore


def test_a_regenerate_that_brought_nothing_shows_the_branch_again():
    reply = asked()
    reply.again(Message("user", "again?"), "retry_failed")
    end = failure_ending(failed(), reply, "en")
    assert end.show_branch and end.partial is None and not end.restore
    assert end.notes[0][1] == "error" and ERROR in end.notes[0][0]
    assert end.notes[1] == (BRANCH_TEXTS("en", "retry_failed"), "info")


def test_a_reply_the_store_refused_stays_to_copy():
    end = failure_ending(failed(partial=PARTIAL, saved=False), asked(), "en")
    assert end.partial is PARTIAL and not end.restore
    assert [kind for _, kind in end.notes] == ["error", "warning"]
    assert end.notes[1][0] == CHAT_TEXTS("en", "unsaved")


def test_stopped_before_any_text_gives_the_question_back():
    end = failure_ending(failed(stopped=True, error=""), asked(), "en")
    assert end.restore and end.partial is None
    assert end.notes == ((CHAT_TEXTS("en", "stopped_empty"), "warning"),)


def test_an_error_gives_the_question_back_and_says_why():
    end = failure_ending(failed(), asked(), "zh")
    assert end.restore and not end.show_branch
    assert end.notes[0][1] == "error" and ERROR in end.notes[0][0]
    assert end.notes[1] == (CHAT_TEXTS("zh", "restored"), "info")


def test_the_reply_ends_whole():
    reply = asked()
    reply.again(Message("user", "again?"), "retry_failed")
    reply.tool_step()
    reply.end()
    assert reply == Reply(usage_before=reply.usage_before) and not reply.on_its_way
