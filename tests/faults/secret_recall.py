"""Fault-matrix rows for secrets in plain prose, in recall across sessions and in session titles
(issue 39, items 4 and 5).

Item 4: a password said in words or typed on a command line passed the memory guard and
`export --redact` ("the prod db password is Hunter2-prod!", `mysql -u root -pS3cretP4ss`,
"passphrase correcthorse"). Item 5: a deploy key said in one session went verbatim into a new
session's request through recall across sessions, and a session whose first message started with
a token showed it as its title in `sessions` and in the recall label.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.fakeserver import FakeProvider
from tests.faults import ProcCase, ProcOutcome, Trial, one_line

OTHER_SESSIONS = "Recalled from the user's other sessions"

# -- item 4: passwords in plain words ------------------------------------------------------------

SAID = [  # (what the user keeps, the password in it)
    ("the prod db password is Hunter2-prod!", "Hunter2-prod"),
    ("connect with mysql -u root -pS3cretP4ss", "S3cretP4ss"),
    ("passphrase correcthorse", "correcthorse"),
    ("数据库密码是 Zx9-kestrel，别外传", "Zx9-kestrel"),
    ("backups run sshpass -p Bk4p-2026 rsync -a /srv backup:/srv", "Bk4p-2026"),
]
ABOUT = ["reset your password in the admin panel", "密码错误时请联系管理员",
         "the password is stored in Vault"]


def refused_by_memory_add(t: Trial, texts: list[str]) -> int:
    """How many of `texts` `memory add` refused as a secret (each one not is a problem)."""
    refused = 0
    for text in texts:
        add = t.run("memory", "add", text)
        if t.expect(add.returncode == 2 and "never holds a secret" in add.stderr,
                    f"memory add {text[:30]!r}: exit {add.returncode}: {one_line(add.stderr)}"):
            refused += 1
    return refused


def memory_and_redact_refuse_passwords_in_words(tmp: Path) -> ProcOutcome:
    passwords = [p for _, p in SAID]
    t = Trial(4, "memory add and export --redact: passwords said in words", tmp,
              secrets=passwords, issue=39)
    refused = refused_by_memory_add(t, [text for text, _ in SAID])
    for text in ABOUT:  # prose about passwords holds none: kept
        add = t.run("memory", "add", text)
        t.expect(add.returncode == 0, f"memory add {text!r} refused: {one_line(add.stderr)}")
    listed = t.run("memory", "list").stdout
    t.expect(all(text in listed for text in ABOUT), "the entries about passwords are not listed")
    with FakeProvider(limit=100_000) as fake:
        fake.reply_fn = lambda body: "Noted."
        pasted = "\n".join(text for text, _ in SAID + [(a, "") for a in ABOUT])
        ask = t.run("--base-url", fake.base_url, "--model", "m", "ask", "-", stdin=pasted)
    t.expect(ask.returncode == 0, f"ask: exit {ask.returncode}: {one_line(ask.stderr)}")
    t.keeps([pasted])  # the session keeps what was said; only the shared export hides it
    for fmt in ("md", "json"):
        shown = t.run("export", "--format", fmt, "--redact").stdout  # counted if it leaks
        t.expect(all(text in shown or json.dumps(text, ensure_ascii=False)[1:-1] in shown
                     for text in ABOUT), f"export --format {fmt} --redact changed prose")
    return t.outcome(f"{refused} of {len(SAID)} refused by memory add; export --redact hid "
                     "them; prose about passwords kept")


# -- item 5: recall across sessions --------------------------------------------------------------

KEY = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
PASSWORD = "Hunter2-prod!"
DEPLOY = (f"Deploy notes for the kestrel-07 release: the deploy key is {KEY} and the prod "
          f"db password is {PASSWORD}")
QUESTION = "Last week I gave you the kestrel-07 release deploy key, which one was it?"


def _recall_run(t: Trial, first: str, *, config: str = "",
                question: str = QUESTION) -> list[str]:
    """Session 1 says `first`, then a new session asks QUESTION; the last request's user
    message (where recall puts the other sessions' turns) and every request of the new
    session, as sent."""
    with FakeProvider(limit=100_000) as fake:
        fake.reply_fn = lambda body: "Noted."
        t.write_config(f'base_url = "{fake.base_url}"\nmodel = "m"\n'
                       f"context_window = 100000\n{config}")
        said = t.run("ask", "--new", first)
        t.expect(said.returncode == 0, f"session 1: exit {said.returncode}: "
                                       f"{one_line(said.stderr)}")
        before = len(fake.chat_requests)
        asked = t.run("ask", "--new", question)
        t.expect(asked.returncode == 0, f"session 2: exit {asked.returncode}: "
                                        f"{one_line(asked.stderr)}")
        sent = [json.dumps(r.body, ensure_ascii=False) for r in fake.chat_requests[before:]]
        last = fake.chat_requests[-1].body["messages"][-1]["content"] if sent else ""
    return [last, *sent]


def recalled_key_is_redacted(tmp: Path) -> ProcOutcome:
    t = Trial(5, "a deploy key said in session 1, recalled by a new session", tmp,
              secrets=[KEY, PASSWORD], issue=39)
    last, *sent = _recall_run(t, DEPLOY)
    t.expect(OTHER_SESSIONS in last and "kestrel-07" in last.split(OTHER_SESSIONS, 1)[-1],
             "the new session's request recalled nothing of session 1")
    t.expect(not any(KEY in s for s in sent), "the deploy key went into the new session's "
                                              "request")
    t.expect(not any("Hunter2-prod" in s for s in sent), "the db password went into the new "
                                                         "session's request")
    t.expect("[redacted]" in last, "no [redacted] where the key was")
    found = t.run("search", "--all", "kestrel-07 deploy")  # printed: counted if it leaks
    t.expect("kestrel-07" in found.stdout, f"search --all found nothing: {one_line(found.stderr)}")
    return t.outcome("recalled into the new session as [redacted]; search --all too")


def recall_unredacted_when_turned_off(tmp: Path) -> ProcOutcome:
    t = Trial(5, "recall_redact_secrets = false: the key recalled as said", tmp, issue=39)
    last, *sent = _recall_run(t, DEPLOY, config="recall_redact_secrets = false\n")
    t.expect(OTHER_SESSIONS in last, "the new session's request recalled nothing of session 1")
    t.expect(KEY in last and PASSWORD in last, "the user's choice (recall_redact_secrets = "
                                               "false) was not kept: the key is not in it")
    return t.outcome("sent as said, the user's choice")


TOKEN_FIRST = f"{KEY} is the kestrel-07 release deploy key, keep it for the rollout"
OLD_TITLE = f"{KEY} — the kestrel-07 release deploy key…"  # as an older version stored it


def title_never_shows_a_token(tmp: Path) -> ProcOutcome:
    t = Trial(5, "a session whose first message starts with a token: its title", tmp,
              secrets=[KEY], issue=39)
    last, *sent = _recall_run(t, TOKEN_FIRST)
    block = last.split(OTHER_SESSIONS, 1)[-1] if OTHER_SESSIONS in last else ""
    t.expect(block, "the new session's request recalled nothing of session 1")
    labels = [line for line in block.splitlines()
              if line.startswith("[") and not line.startswith(("[user]", "[assistant]"))]
    t.expect(labels and not any(KEY[:12] in line for line in labels),
             f"the recall label shows the token: {labels[:1]}")
    listed = t.run("sessions")  # printed: counted if the token is in a title
    t.expect("kestrel-07" in listed.stdout, f"sessions: {one_line(listed.stdout)}")
    # A store written by an older version holds the token in the title itself.
    with sqlite3.connect(t.db) as db:
        db.execute("UPDATE conversations SET title = ? WHERE id = 1", (OLD_TITLE,))
    again = t.run("sessions")
    t.expect("[redacted]" in again.stdout, f"sessions: {one_line(again.stdout)}")
    return t.outcome(one_line(again.stdout))


# -- the second hostile pass: full-width letters and the other ways Chinese says it -------------

# An input method in full-width mode types ｈｕｎｔｅｒ２ for the keys of hunter2, and a model's
# tokenizer (NFKC) reads it back as hunter2; Chinese links 密码 to its value with more than 是.
WIDE_SAID = [  # (what the user says, the password in it)
    ("ｐａｓｓｗｏｒｄ is Kx7-heron!", "Kx7-heron"),
    ("the kestrel-07 db password is ｈｕｎｔｅｒ２-ｐｒｏｄ", "ｈｕｎｔｅｒ２-ｐｒｏｄ"),
    ("the kestrel-07 deploy key is ｇｈｐ＿" + "ａＢ３" * 12, "ａＢ３ａＢ３ａＢ３"),
    ("我的密码就是 Qw3-plover", "Qw3-plover"),
    ("数据库密码改成了Lp5-curlew!", "Lp5-curlew"),
    ("堡垒机密码是「Mn8-godwit」", "Mn8-godwit"),
    ("the password for the prod db is Rt6-avocet!", "Rt6-avocet"),
]
WIDE_QUESTION = "Last week I gave you the kestrel-07 release passwords, which were they?"


def wide_and_chinese_passwords_stay_out(tmp: Path) -> ProcOutcome:
    passwords = [p for _, p in WIDE_SAID]
    t = Trial(4, "passwords in full-width letters and in other Chinese phrasings", tmp,
              secrets=passwords, issue=39)
    refused = refused_by_memory_add(t, [text for text, _ in WIDE_SAID])
    notes = "Kestrel-07 release notes.\n" + "\n".join(text for text, _ in WIDE_SAID)
    last, *sent = _recall_run(t, notes, question=WIDE_QUESTION)
    t.expect(OTHER_SESSIONS in last and "kestrel-07" in last.split(OTHER_SESSIONS, 1)[-1],
             "the new session's request recalled nothing of session 1")
    carried = [p for p in passwords if any(p in s for s in sent)]
    t.expect(not carried, f"the new session's request carried {carried}")
    t.keeps([notes], conv_id=1)  # the session keeps what was said; only what leaves it hides it
    shown = t.run("export", "1", "--format", "md", "--redact").stdout  # counted if it leaks
    t.expect("Kestrel-07 release notes" in shown, "export --redact printed no session")
    exported = t.run("export", "1", "--format", "json", "--redact").stdout
    try:  # JSON may escape the full-width letters: read as the user's tools would
        read = json.dumps(json.loads(exported), ensure_ascii=False)
    except ValueError:
        read = ""
    t.expect("Kestrel-07 release notes" in read, "export --format json printed no session")
    t.expect(not [p for p in passwords if p in read], "export --format json --redact kept "
                                                      "a password")
    found = t.run("search", "--all", "kestrel-07")  # counted if it leaks
    t.expect("kestrel-07" in found.stdout, f"search --all found nothing: {one_line(found.stderr)}")
    return t.outcome(f"{refused} of {len(WIDE_SAID)} refused by memory add; recall, "
                     "export --redact and search --all hid them")


CASES: list[ProcCase] = [
    ProcCase(4, "memory add and export --redact: passwords said in words",
             memory_and_redact_refuse_passwords_in_words, issue=39),
    ProcCase(5, "a deploy key said in session 1, recalled by a new session",
             recalled_key_is_redacted, issue=39),
    ProcCase(5, "recall_redact_secrets = false: the key recalled as said",
             recall_unredacted_when_turned_off, issue=39),
    ProcCase(5, "a session whose first message starts with a token: its title",
             title_never_shows_a_token, issue=39),
    ProcCase(4, "passwords in full-width letters and in other Chinese phrasings",
             wide_and_chinese_passwords_stay_out, issue=39),
]
