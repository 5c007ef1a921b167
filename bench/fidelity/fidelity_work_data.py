"""bench/fidelity/fidelity_work.py's conversation: a working session's turns (pasted source files,
logs, JSON and stack traces, git tool calls, short notes) and the facts planted among them.

The facts (FACTS) are the tuning set: each is stated once, early, in the user's own prose, and
asked about later in other words, once in its own language and once in the other. Half are
said on their own (a path, a command, a latency, a port, a database decision, a phone number,
an error message, a URL, a flight number, a budget); the other half in the same turn as a git
tool call, a pasted JSON log or a stack trace ("with"), where the ledger meets them among the
identifiers of what was pasted. The held-out set (bench/fidelity/fidelity_work_fresh.py) has the
same form and is written by someone else.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from random import Random

from bench.fidelity.fidelity_work_pastes import (
    CHARS_PER_TOKEN,
    api_json,
    app_log,
    json_log,
    nginx_log,
    source,
    traces,
)

COMMITS = 60  # of tests.mcp_servers.make_git_repo: revision n's patch is about 320n tokens
PASTES = ("source", "log", "json", "trace", "git")

# ---- the working filler ----------------------------------------------------------------------

INTROS = {
    "source": {
        "en": ["here's the file:", "this is {path} as it is now:", "pasting {path}, have a look",
               "the module in question ({path}):", "current version of {path}:",
               "ok here's the code"],
        "zh": ["文件如下：", "这是 {path} 现在的样子：", "贴一下 {path}，你看看",
               "相关代码（{path}）：", "代码在这：", "{path} 的内容："]},
    "log": {
        "en": ["logs from this morning:", "here's the access log around the spike",
               "app log, the errors start somewhere in the middle:", "tail of the log:"],
        "zh": ["日志如下：", "出问题那段时间的访问日志：", "应用日志，中间开始报错：",
               "最后这段日志："]},
    "json": {
        "en": ["here's what the API returns:", "the response body:",
               "structured logs from the shipper:", "raw JSON from the endpoint"],
        "zh": ["接口返回的是这个：", "响应体如下：", "日志平台导出来的：", "原始 JSON："]},
    "trace": {
        "en": ["got this trace:", "stack trace from staging:", "it blows up like this:",
               "full traceback below"],
        "zh": ["报错堆栈：", "预发环境的堆栈：", "又挂了，堆栈如下：", "完整的 traceback："]},
}
GIT_ASKS = {
    "git_log": {"en": ["Read the recent history, what changed lately?",
                       "Who has been committing and what about? Check the log."],
                "zh": ["看一下最近的提交记录", "最近都提交了些什么？看看 log"]},
    "git_show": {"en": ["Show me that older commit in full.", "What exactly did that revision do?"],
                 "zh": ["把那个旧提交完整地给我看看", "那次提交具体改了什么？"]},
    "git_diff": {"en": ["Diff the working tree against an earlier revision.",
                        "How far is my checkout from a few commits back?"],
                 "zh": ["工作区和之前的版本比一下", "我本地和前几个提交差了多少？"]},
}
NOTES = {
    "en": ["ok that fixed the import, next the parser", "run the tests again?",
           "still failing on CI, same error as before", "hmm, that didn't help",
           "nice, the flaky one passes now", "can you double check the retry logic?",
           "let's leave the logging for later", "what's the cleanest way to split this module?",
           "rebased on main, conflicts were trivial", "I think the cache is the culprit here",
           "ok, pushing this and opening a PR", "wait, why is that awaited twice?",
           "lint is complaining about unused imports, fixing", "coffee break, back in 10",
           "tests green locally, CI is slower", "should this be a dataclass instead?",
           "the second approach reads better, go with that for now",
           "can you write a test for the empty case?"],
    "zh": ["跑一下测试看看", "好了，import 的问题解决了，接下来看解析器",
           "CI 上还是挂，跟刚才一样的错",
           "嗯，没用", "不错，那个不稳定的用例现在过了", "帮我再检查一下重试的逻辑",
           "日志那块先放一放", "这个模块怎么拆比较干净？", "已经 rebase 到 main 了，冲突很简单",
           "我怀疑是缓存的问题", "好，我先提交，开个 PR", "等下，这里为什么 await 了两次？",
           "lint 报了没用的 import，我改一下", "休息一下，十分钟后回来", "本地测试全绿，CI 慢一点",
           "这个是不是改成 dataclass 更好？", "第二种写法更清楚，先这样",
           "帮我给空输入的情况写个测试"],
}
# Of a working turn (see working_turn): what kind it is, by weight. About a third pastes of
# source files, some logs, JSON and traces, some tool calls, the rest short notes.
WEIGHTS = {"source": 34, "log": 10, "json": 7, "trace": 7, "git": 14, "note": 28}


def paste_tokens(rng: Random, window: int) -> int:
    """A paste's size, log-uniform between a small and a large share of the window: at 4,096
    about one in nine is larger than the window; at 131,072 they run to 40,000 tokens, so five
    compactions come within a few dozen turns."""
    lo, hi = min(window / 25, 2000), min(window * 1.5, 40_000)
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def paste(kind: str, language: str, rng: Random, tokens: int, repo: Path | None = None) -> str:
    """A turn that pastes `kind` ("source", "log", "json", "trace"), introduced the way people
    do, or for "git" asks for a git tool call (the fake model's `call` directive)."""
    if kind == "git":
        return git_turn(language, rng, tokens, repo)
    chars = int(tokens * CHARS_PER_TOKEN[kind])
    path = ""
    if kind == "source":
        path, body = source(rng, chars)
    elif kind == "log":
        body = (nginx_log if rng.random() < 0.5 else app_log)(rng, chars)
    elif kind == "json":
        body = (api_json if rng.random() < 0.5 else json_log)(rng, chars)
    else:
        body = traces(rng, chars)
    intro = rng.choice(INTROS[kind][language]).format(path=path)
    return f"{intro}\n```\n{body}\n```"


def git_turn(language: str, rng: Random, tokens: int, repo: Path | None) -> str:
    """A question about the repository and the call the fake model will make for it, sized
    near `tokens` (the engine cuts what is too large for its window)."""
    if repo is None:
        raise ValueError("a git turn needs the repository")
    tool = rng.choice(sorted(GIT_ASKS))
    args: dict[str, object] = {"repo_path": str(repo)}
    if tool == "git_log":
        args["max_count"] = max(3, min(COMMITS, tokens // 70))
    elif tool == "git_show":
        revision = max(1, min(COMMITS, round(tokens / 320)))
        args["revision"] = f"HEAD~{COMMITS - revision}"
    else:
        args["target"] = f"HEAD~{rng.randrange(1, 6)}"
    ask = rng.choice(GIT_ASKS[tool][language])
    return f"{ask}\ncall {tool} {json.dumps(args)}"


def working_turn(language: str, rng: Random, window: int, repo: Path | None = None) -> str:
    """One turn of a working session in `language` ("en" or "zh"), sized for `window`. Without
    a repository there are no tool turns (their share goes to notes)."""
    kinds = [k for k in WEIGHTS if repo is not None or k != "git"]
    kind = rng.choices(kinds, [WEIGHTS[k] for k in kinds])[0]
    if kind == "note":
        return rng.choice(NOTES[language])
    return paste(kind, language, rng, paste_tokens(rng, window), repo)


# ---- the tuning facts ------------------------------------------------------------------------

def _fact(kind: str, language: str, statement: str, value: str, same: str, other: str,
          with_: str | None = None) -> dict:
    fact = {"kind": kind, "language": language, "statement": statement, "value": value,
            "questions": [same, other]}
    if with_:
        fact["with"] = with_  # the paste or tool call said in the same turn
    return fact


FACTS: list[dict] = [
    # English, in the user's own prose
    _fact("path", "en", "The config loader we keep patching lives in "
          "services/ingest/config/loader_v2.py, that's the one to touch.",
          "services/ingest/config/loader_v2.py",
          "Which file was the config loader in again?", "配置加载器是哪个文件来着？"),
    _fact("command", "en", "To run the slow suite locally I use "
          "`pytest -m slow --maxfail=3 tests/ingest`, it takes a while.",
          "pytest -m slow --maxfail=3 tests/ingest",
          "How do I run the slow tests locally?", "本地跑慢测试用的什么命令？"),
    _fact("number", "en", "Before the refactor the p99 latency of the ingest endpoint was "
          "870 ms, that's our baseline.", "870 ms",
          "What was the ingest p99 before we refactored?", "重构之前 ingest 接口的 p99 是多少？"),
    _fact("port", "en", "The metrics exporter listens on port 9464 inside the pod.", "9464",
          "Which port was the metrics exporter on again?", "指标导出器是哪个端口来着？"),
    _fact("decision", "en", "We decided to move the job queue from Redis to Postgres with "
          "SKIP LOCKED.", "Postgres with SKIP LOCKED",
          "What did we settle on for the job queue?", "任务队列最后定了用什么？"),
    _fact("phone", "en", "If the deploy breaks at night, call the on-call phone at "
          "+1 415 555 0142.", "+1 415 555 0142",
          "What's the number to ring if a deploy breaks at night?", "晚上部署出事打哪个电话？"),
    _fact("error", "en", "The error the customer sees is "
          "ERR_UPSTREAM_RESET: upstream closed before headers.",
          "ERR_UPSTREAM_RESET: upstream closed before headers",
          "What's the exact error message the customer gets?", "客户看到的报错原文是什么？"),
    _fact("url", "en", "The runbook is at https://wiki.example.com/ops/ingest-runbook if you "
          "need the escalation steps.", "https://wiki.example.com/ops/ingest-runbook",
          "Where's the runbook with the escalation steps?", "升级处理的运维手册在哪个链接？"),
    _fact("code", "en", "I'm flying out on LH 1123 on Thursday, so this has to be done by "
          "Wednesday.", "LH 1123",
          "Which flight am I on Thursday?", "我周四坐的是哪个航班？"),
    _fact("number", "en", "The infra budget for this quarter is $18,400, the fix must not "
          "blow it.", "$18,400",
          "How much infra money do we have this quarter?", "这个季度的基础设施预算是多少？"),
    # English, said in the turn of a tool call, a pasted JSON log or a stack trace
    _fact("name", "en", "Ada wrote most of module.py, but the reviewer for anything in it is "
          "Marguerite Okonkwo.", "Marguerite Okonkwo",
          "Who has to review changes to module.py?", "module.py 的改动要找谁审？", "git"),
    _fact("time", "en", "We have to tag the release by 2026-04-17 16:00 UTC.",
          "2026-04-17 16:00",
          "When's the deadline for tagging the release?", "发版打 tag 的截止时间是什么时候？",
          "git"),
    _fact("code", "en", "The release branch will be called release/2.14-hotfix.",
          "release/2.14-hotfix",
          "What are we naming the release branch?", "发布分支叫什么名字？", "git"),
    _fact("command", "en", "After you look at it I'll run `git revert --no-edit 4c1d2e9` "
          "unless you object.", "git revert --no-edit 4c1d2e9",
          "What was I going to run once you'd looked at the commit?",
          "你看完提交以后我准备执行哪条命令？", "git"),
    _fact("code", "en", "The failing request id is req_7f3e91c2b4, it's in there somewhere.",
          "req_7f3e91c2b4",
          "What was the id of the request that failed?", "失败的那个请求 ID 是什么？", "json"),
    _fact("name", "en", "The tenant with the problem is acme-logistics-eu.",
          "acme-logistics-eu",
          "Which tenant was having the problem?", "出问题的是哪个租户？", "json"),
    _fact("url", "en", "Their webhook points at https://hooks.example.net/ingest/v3/callback.",
          "https://hooks.example.net/ingest/v3/callback",
          "What URL does their webhook call?", "他们的 webhook 配的是哪个地址？", "json"),
    _fact("error", "en", "The first error in the chain is always "
          "could not serialize access due to concurrent update.",
          "could not serialize access due to concurrent update",
          "What's the first error in the chain each time?", "每次链条里最先出现的是什么错误？",
          "trace"),
    _fact("path", "en", "The trace points at vendor code but the real bug is in "
          "app/billing/proration.py.", "app/billing/proration.py",
          "Which file has the real bug behind that trace?", "那个堆栈背后真正有 bug 的是哪个文件？",
          "trace"),
    _fact("port", "en", "The staging database sits behind pgbouncer on port 6543.", "6543",
          "What port is the staging database's pgbouncer on?",
          "预发数据库的 pgbouncer 是哪个端口？",
          "trace"),
    # Chinese, in the user's own prose
    _fact("path", "zh", "配置加载的代码在 services/billing/conf/loader.go，改这个就行。",
          "services/billing/conf/loader.go",
          "配置加载的代码在哪个文件里？", "Which file holds the config loading code?"),
    _fact("command", "zh", "本地跑集成测试用 `go test ./internal/... -run TestSettle -count=1`。",
          "go test ./internal/... -run TestSettle -count=1",
          "本地跑集成测试的命令是什么来着？",
          "What's the command for the integration tests locally?"),
    _fact("number", "zh", "重构之前结算接口的 p99 延迟是 620 毫秒，这是基线。", "620 毫秒",
          "重构前结算接口的 p99 是多少？",
          "What was the settlement endpoint's p99 before the refactor?"),
    _fact("port", "zh", "对账服务在容器里监听 7443 端口。", "7443",
          "对账服务用的是哪个端口？", "Which port does the reconciliation service listen on?"),
    _fact("decision", "zh", "数据库我们决定从 MySQL 换成 TiDB，分库分表太麻烦了。",
          "从 MySQL 换成 TiDB",
          "数据库最后定的什么方案？", "What did we decide to do about the database?"),
    _fact("phone", "zh", "晚上发布出问题就打值班电话 138 0013 8000。", "138 0013 8000",
          "值班电话是多少来着？", "What's the on-call phone number?"),
    _fact("error", "zh", "用户那边看到的报错是“订单状态不一致：期望 PAID 实际 PENDING”。",
          "订单状态不一致：期望 PAID 实际 PENDING",
          "用户看到的报错原文是什么？", "What exact error do the users get?"),
    _fact("url", "zh", "运维手册在 https://wiki.example.cn/ops/settle-runbook ，升级流程都在里面。",
          "https://wiki.example.cn/ops/settle-runbook",
          "运维手册的链接发我一下？", "Where's the ops runbook with the escalation process?"),
    _fact("code", "zh", "我周四坐 CA1502 去北京，周三之前得弄完。", "CA1502",
          "我周四坐哪趟航班？", "Which flight am I taking on Thursday?"),
    _fact("number", "zh", "这个季度的云资源预算是 9万6千元，别超了。", "9万6千元",
          "这个季度云资源预算有多少？", "What's our cloud budget this quarter?"),
    # Chinese, said in the turn of a tool call, a pasted JSON log or a stack trace
    _fact("name", "zh", "module.py 的代码审查找欧阳静怡，她对这块最熟。", "欧阳静怡",
          "module.py 的代码该找谁审？", "Who should review the module.py code?", "git"),
    _fact("time", "zh", "发版的 tag 要在 4月23日下午5点前打好。", "4月23日下午5点",
          "发版 tag 最晚什么时候要打好？", "When is the release tag due?", "git"),
    _fact("code", "zh", "这次的发布分支叫 release/3.2-rc1。", "release/3.2-rc1",
          "这次发布分支叫什么？", "What's this release's branch called?", "git"),
    _fact("command", "zh", "你看完以后我打算执行 `git cherry-pick -x 9b7e5a1`。",
          "git cherry-pick -x 9b7e5a1",
          "你看完以后我要执行的是哪条命令？",
          "Which command was I planning to run after your look?",
          "git"),
    _fact("code", "zh", "出问题的请求 ID 是 trace-5d2a9c7e81，日志里能搜到。", "trace-5d2a9c7e81",
          "出问题那个请求的 ID 是多少？", "What's the id of the request that went wrong?", "json"),
    _fact("name", "zh", "出问题的商户是杭州云栖贸易有限公司。", "杭州云栖贸易有限公司",
          "出问题的是哪家商户？", "Which merchant had the problem?", "json"),
    _fact("url", "zh", "他们的回调地址配的是 https://notify.example.cn/pay/v2/callback 。",
          "https://notify.example.cn/pay/v2/callback",
          "他们回调配的哪个地址？", "What callback URL did they configure?", "json"),
    _fact("error", "zh", "根因是 Deadlock found when trying to get lock，后面的都是连锁反应。",
          "Deadlock found when trying to get lock",
          "根本原因是什么报错？", "What was the root-cause error?", "trace"),
    _fact("path", "zh", "堆栈看着像框架的问题，其实 bug 在 "
          "src/main/java/com/example/settle/LedgerWriter.java。",
          "src/main/java/com/example/settle/LedgerWriter.java",
          "真正有 bug 的是哪个文件？", "Which file really has the bug?", "trace"),
    _fact("port", "zh", "预发环境的数据库走 pgbouncer，端口是 6432。", "6432",
          "预发数据库 pgbouncer 的端口是多少？", "Which port is pgbouncer on for the staging DB?",
          "trace"),
]


def problems(facts: list[dict]) -> list[str]:
    """What is wrong with a set of facts, by index only (a held-out set's words stay unseen):
    a value must be in its statement, and in none of its questions."""
    out = []
    for i, f in enumerate(facts):
        if f["value"] not in f["statement"]:
            out.append(f"fact {i}: value not in its statement")
        if any(f["value"] in q for q in f["questions"]):
            out.append(f"fact {i}: value in a question")
        if len(f["questions"]) != 2:
            out.append(f"fact {i}: {len(f['questions'])} questions, not 2")
        if f["language"] not in ("en", "zh"):
            out.append(f"fact {i}: language not en or zh (no session would say it)")
        if f.get("with") not in (None, *PASTES):
            out.append(f"fact {i}: said with something the session never pastes")
    return out
