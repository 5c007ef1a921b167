"""Held-out facts, preferences and questions for bench/recall/cross_session.py, written before the
cross-session recall code existed (and committed on their own), so nothing here is tuned to it.

Each entry is said once, in the user's own prose, in one working session among pasted code,
logs, JSON and notes; days of turns later a NEW session asks for it. `value` is the exact
substring that must reach that new session's request. `questions[0]` asks in the statement's
language, `questions[1]` in the other language; every question points back beyond its session
("last week", "in the other chat", "上次", "前几天") in other words than the statement's.

ORDINARY holds messages of a new session that point back beyond nothing: working-session
messages, and ones that point back within their own session ("as I said above", "刚才说的");
bench/data's natural prose is read by the bench itself.
"""

from __future__ import annotations

FACTS = [
    # --- English statements: facts --------------------------------------------------------
    {"kind": "fact", "language": "en",
     "statement": "Note for later: the nightly ETL for the warehouse runs from the box called "
                  "kestrel-07, and its crontab fires at 02:15 UTC.",
     "value": "kestrel-07",
     "questions": ["Last week we talked about the nightly warehouse ETL: which host does it "
                   "run on?",
                   "上周我们聊过数据仓库的夜间 ETL，它跑在哪台机器上？"]},
    {"kind": "fact", "language": "en",
     "statement": "The vendor's sandbox account id is AC-55918-ZQ; production uses a different "
                  "one that Priya keeps.",
     "value": "AC-55918-ZQ",
     "questions": ["In the other chat I gave you the vendor sandbox account id, what was it?",
                   "另一个对话里我给过你供应商沙箱的账号 id，是多少？"]},
    {"kind": "fact", "language": "en",
     "statement": "We settled on Redis Streams rather than Kafka for the notification fan-out, "
                  "mostly because ops already runs Redis.",
     "value": "Redis Streams",
     "questions": ["What did we pick for the notification fan-out the other day instead of "
                   "Kafka?",
                   "前几天通知分发那块我们最后没用 Kafka，选的是什么？"]},
    {"kind": "fact", "language": "en",
     "statement": "The flaky integration test is test_refund_partial_capture; it only fails "
                  "when the payments mock restarts mid-suite.",
     "value": "test_refund_partial_capture",
     "questions": ["Yesterday I told you which integration test keeps flaking, remind me of "
                   "its name?",
                   "昨天说的那个老是不稳定的集成测试叫什么名字？"]},
    # --- English statements: preferences ---------------------------------------------------
    {"kind": "preference", "language": "en",
     "statement": "I prefer pytest fixtures over setUp methods, and please never use unittest "
                  "mocks where a fake server would do.",
     "value": "fake server",
     "questions": ["Last time I told you how I like tests written, what did I say about mocks "
                   "and fixtures?",
                   "上次我说过写测试的偏好，关于 mock 和 fixture 我是怎么说的？"]},
    {"kind": "preference", "language": "en",
     "statement": "I always want commit messages in the imperative mood, under 72 characters, "
                  "with the ticket key like PAY-1234 at the end.",
     "value": "72 characters",
     "questions": ["In a previous session I explained my commit message rules, what were "
                   "they?",
                   "之前那个会话里我讲过提交信息的规则，是什么来着？"]},
    {"kind": "preference", "language": "en",
     "statement": "Please use British spelling in all user-facing strings, our customers are "
                  "mostly in the UK.",
     "value": "British spelling",
     "questions": ["Which spelling did I ask for in user-facing strings, in our last "
                   "conversation?",
                   "上次对话里，面向用户的文案我要求用哪种拼写？"]},
    {"kind": "preference", "language": "en",
     "statement": "I like log lines as structured JSON with snake_case keys, never printf-style "
                  "messages.",
     "value": "snake_case keys",
     "questions": ["The other day I said how log lines should look, what format and key "
                   "style?",
                   "前几天我说过日志行应该是什么格式、键名用什么风格？"]},
    # --- Chinese statements: facts ----------------------------------------------------------
    {"kind": "fact", "language": "zh",
     "statement": "记一下：灰度发布的开关在配置中心的 checkout.gray_ratio 里，现在是百分之五。",
     "value": "checkout.gray_ratio",
     "questions": ["上周说的灰度比例是在配置中心哪个键里配的？",
                   "Last week you heard where the gradual rollout ratio is configured, which "
                   "key in the config centre?"]},
    {"kind": "fact", "language": "zh",
     "statement": "对了，测试环境的数据库只读账号是 qa_reader，密码找运维老周要。",
     "value": "qa_reader",
     "questions": ["另一个对话里我提过测试环境数据库的只读账号，叫什么？",
                   "In the other chat I mentioned the read-only database account for the test "
                   "environment, what's it called?"]},
    {"kind": "fact", "language": "zh",
     "statement": "我们决定把消息队列的重试上限定为七次，超过就进死信队列 dlq.orders。",
     "value": "dlq.orders",
     "questions": ["前几天定的消息队列重试超限以后进的死信队列叫什么？",
                   "The other day we decided where messages go after too many retries, "
                   "what's the dead letter queue called?"]},
    {"kind": "fact", "language": "zh",
     "statement": "备忘：压测用的机器是 loadgen-3 和 loadgen-4，别拿生产的跳板机去压。",
     "value": "loadgen-3",
     "questions": ["上次说压测该用哪几台机器来着？",
                   "Last time you were told which machines to run the load tests from, "
                   "which ones?"]},
    # --- Chinese statements: preferences ----------------------------------------------------
    {"kind": "preference", "language": "zh",
     "statement": "我喜欢代码注释用中文写，但变量名和函数名一律用英文。",
     "value": "注释用中文",
     "questions": ["上次我说过注释和命名用什么语言，你还记得吗？",
                   "In our previous conversation I said which language to write comments and "
                   "names in, what was it?"]},
    {"kind": "preference", "language": "zh",
     "statement": "以后回答我的时候请先给结论，再给理由，不要长篇铺垫。",
     "value": "先给结论",
     "questions": ["之前那个对话里我说过回答要怎么组织，是什么顺序？",
                   "In another session I told you how to order your answers, conclusion or "
                   "reasons first?"]},
    {"kind": "preference", "language": "zh",
     "statement": "接口返回的时间一律用 ISO 8601 格式加时区，不要用时间戳整数。",
     "value": "ISO 8601",
     "questions": ["上周我说接口里时间字段用什么格式来着？",
                   "Last week I said what format API time fields should use, which one?"]},
    {"kind": "preference", "language": "zh",
     "statement": "我习惯用 ruff 做格式化和检查，行宽一百，不要再引入 black。",
     "value": "行宽一百",
     "questions": ["昨天我说格式化和检查用什么工具、行宽多少？",
                   "Yesterday I told you which formatter and linter I use and the line "
                   "width, remind me?"]},
]

# Messages of a new session that point back beyond nothing: none may bring another session's
# turns into the request.
ORDINARY = {
    "en": [
        "Can you add a retry with jitter around the HTTP call in fetch_orders?",
        "The build is red again, the linter complains about an unused import.",
        "As I said above, the handler must not block the event loop.",
        "Like I mentioned earlier, keep the public API unchanged.",
        "Rename the config loader and update its callers, please.",
        "Why does the warehouse ETL crontab use UTC rather than local time?",
        "What's a good default for a Redis Streams consumer group's block timeout?",
        "Write a pytest fixture that starts a fake server on loopback.",
        "Explain the difference between structured JSON logs and printf-style logs.",
        "Going back to the function above, can it return early on empty input?",
        "The integration tests are slow, can we run them in parallel?",
        "Please review this diff and tell me what could break in production.",
    ],
    "zh": [
        "帮我给 fetch_orders 里的 HTTP 调用加上带抖动的重试。",
        "构建又挂了，lint 说有一个没用到的 import。",
        "刚才说的那个处理函数不能阻塞事件循环。",
        "像上面说的，公开接口保持不变。",
        "把配置加载器改个名字，调用的地方也一起改。",
        "灰度发布一般按什么比例逐步放量比较合适？",
        "死信队列里的消息一般怎么重新投递？",
        "帮我写一个在本地回环地址上启动假服务器的 pytest fixture。",
        "解释一下结构化 JSON 日志和 printf 风格日志的区别。",
        "回到上面那个函数，空输入能不能直接返回？",
        "集成测试太慢了，能不能并行跑？",
        "帮我看看这个 diff，上线后可能会出什么问题。",
    ],
}
