"""A second held-out set for bench/recall/cross_session.py (`--set cross_language`), written before
any cross-language matching code changed (and committed on its own), so nothing here is tuned
to it: the facts and preferences of developers' working sessions, half said in Chinese and half
in English, each asked from a NEW session in the other language and in its own.

Same shape as bench/recall/cross_session_data.py: `value` is the exact substring that must reach the
new session's request; `questions[0]` asks in the statement's language, `questions[1]` in the
other; every question points back beyond its session in other words than the statement's.
ORDINARY: messages of a new session about similar work that point back beyond nothing (some
point back within their own session): none may bring another session's turns in.
"""

from __future__ import annotations


def _fact(kind: str, language: str, statement: str, value: str, same: str,
          other: str) -> dict:
    return {"kind": kind, "language": language, "statement": statement, "value": value,
            "questions": [same, other]}


FACTS = [
    # --- English statements ---------------------------------------------------------------
    _fact("fact", "en",
          "FYI the staging Postgres replica lives on db-stg-14, and only the migration job is "
          "allowed to write to it.",
          "db-stg-14",
          "Last week I mentioned where the staging Postgres replica lives, which host was it?",
          "上周我说过预发环境的 Postgres 副本在哪台主机上？"),
    _fact("fact", "en",
          "The service account for the deploy pipeline is svc-deployer-ci; its token rotates "
          "every 30 days.",
          "svc-deployer-ci",
          "In the other chat I told you the deploy pipeline's service account, what's its name?",
          "另一个对话里我告诉过你部署流水线用的服务账号，叫什么？"),
    _fact("fact", "en",
          "Decision: we are dropping Celery and moving the background jobs to Dramatiq, "
          "because Celery's retries kept duplicating emails.",
          "Dramatiq",
          "A few days ago we decided what replaces Celery for background jobs, what was it?",
          "前几天我们决定后台任务不用 Celery 了，换成了什么？"),
    _fact("fact", "en",
          "The feature flag that turns on the new search ranking is search.ranking_v2_enabled, "
          "default off.",
          "search.ranking_v2_enabled",
          "Last time I gave you the feature flag key for the new search ranking, which key?",
          "上次我给过你新搜索排序的功能开关的键名，是哪个？"),
    _fact("fact", "en",
          "The memory leak is tracked in ticket OPS-4471, and Marta from the platform team "
          "owns it.",
          "OPS-4471",
          "Yesterday I told you which ticket tracks the memory leak, what's the number?",
          "昨天说的内存泄漏是哪个工单在跟？编号多少？"),
    _fact("fact", "en",
          "We pinned the Node runtime to 18.19.1 on the build agents; 20.x breaks the image "
          "resizing library.",
          "18.19.1",
          "Which Node version did we pin on the build agents, in our previous session?",
          "之前那个会话里，构建机上的 Node 版本锁在哪个版本了？"),
    _fact("fact", "en",
          "Our on-call escalation goes to Devika first, she is the tech lead for payments; "
          "after her it's the SRE rotation.",
          "Devika",
          "The other day I said who gets escalations first for payments, who is it?",
          "前几天我说过支付这边出事先找谁，是哪位技术负责人？"),
    _fact("fact", "en",
          "The rate limit for the public API is 600 requests per minute per token; partners "
          "get 3000.",
          "600 requests per minute",
          "In an earlier conversation I gave you the public API's rate limit, what was it?",
          "之前的对话里我说过公开接口的限流是多少？"),
    _fact("fact", "en",
          "The S3 bucket for nightly database backups is acme-db-backups-eu, in eu-west-1.",
          "acme-db-backups-eu",
          "Last week I told you which bucket the nightly database backups go to, which one?",
          "上周说的数据库每晚备份放在哪个存储桶？"),
    _fact("preference", "en",
          "I want every pull request to have a short description with a testing section; "
          "no screenshots unless it's a UI change.",
          "testing section",
          "Last time I said what a pull request description should contain, what was it?",
          "上次我说过合并请求的描述里要写什么？"),
    _fact("preference", "en",
          "Prefer dataclasses with frozen=True for value objects, not pydantic models, unless "
          "we parse external input.",
          "frozen=True",
          "In another session I said how I like value objects defined, remind me?",
          "另一个会话里我说过值对象要怎么定义，你还记得吗？"),
    _fact("preference", "en",
          "When you suggest shell commands, always give the dry-run variant first so I can "
          "check it before anything is deleted.",
          "dry-run variant first",
          "A few days ago I told you how to suggest shell commands, what did I ask for?",
          "前几天我说过你给命令行命令的时候要先给什么？"),
    # --- Chinese statements ---------------------------------------------------------------
    _fact("fact", "zh",
          "记一下：日志采集的 agent 跑在 hermes-log-02 这台机器上，重启要先通知值班。",
          "hermes-log-02",
          "上次说日志采集的 agent 跑在哪台机器上来着？",
          "Last time I told you which machine the log collection agent runs on, which one?"),
    _fact("fact", "zh",
          "监控系统的只读账号是 grafana_viewer，给外包同事用的就是这个。",
          "grafana_viewer",
          "另一个对话里我提过监控系统的只读账号，叫什么？",
          "In another chat I mentioned the read-only account for the monitoring system, "
          "what is it?"),
    _fact("fact", "zh",
          "我们最后定了用 ClickHouse 存埋点数据，不用 Elasticsearch，主要是查询成本低。",
          "ClickHouse",
          "前几天我们定了埋点数据存在哪个库里，不是 Elasticsearch 那个？",
          "A few days ago we decided where to store the tracking events data instead of "
          "Elasticsearch, what did we choose?"),
    _fact("fact", "zh",
          "连接池的最大连接数配置项是 db.pool.max_size，线上现在设成了 40。",
          "db.pool.max_size",
          "上周说的连接池最大连接数是哪个配置项？",
          "Last week I told you the config key for the connection pool's maximum size, "
          "which key?"),
    _fact("fact", "zh",
          "支付回调偶尔丢失的问题记在 PAY-2290 这个工单里，老王在跟。",
          "PAY-2290",
          "昨天说的支付回调丢失那个问题是哪个工单？",
          "Yesterday I mentioned the ticket for the lost payment callbacks, what's its "
          "number?"),
    _fact("fact", "zh",
          "客户端 SDK 要升级到 4.12.3，旧版本的签名算法有漏洞。",
          "4.12.3",
          "之前那个对话里说客户端 SDK 要升级到哪个版本？",
          "In a previous conversation I said which version the client SDK must be upgraded "
          "to, which one?"),
    _fact("fact", "zh",
          "安全审计的对接人是小林，她是安全团队的负责人，有问题直接找她。",
          "小林",
          "上次说安全审计找谁对接来着？",
          "Last time I told you who the contact for the security audit is, who?"),
    _fact("fact", "zh",
          "数据库慢查询的阈值我们定成了 800 毫秒，超过就打告警。",
          "800 毫秒",
          "前几天定的数据库慢查询阈值是多少？",
          "The other day we set the slow query threshold for the database, what was it?"),
    _fact("fact", "zh",
          "新的内部镜像仓库地址是 registry.corp.example:5000，老的那个下个月下线。",
          "registry.corp.example:5000",
          "上周我说新的内部镜像仓库地址是什么？",
          "Last week I told you the address of the new internal image registry, what is it?"),
    _fact("preference", "zh",
          "写错误提示的时候要告诉用户下一步该怎么做，不要只说失败了。",
          "下一步该怎么做",
          "上次我说过错误提示应该怎么写？",
          "Last time I told you how error messages should be written, what did I say?"),
    _fact("preference", "zh",
          "代码评审的时候请按严重程度排序，先说会导致线上故障的问题，风格问题放最后。",
          "按严重程度排序",
          "另一个对话里我说过代码评审的意见要按什么顺序？",
          "In another session I said how to order code review comments, what order?"),
    _fact("preference", "zh",
          "数据库迁移脚本必须可以回滚，每个迁移都要写 down 方法。",
          "down 方法",
          "之前的会话里我对数据库迁移脚本提过什么要求？",
          "In an earlier session I said what every database migration script must have, "
          "what was it?"),
]

# Messages of a new session about the same kind of work that point back beyond nothing.
ORDINARY = {
    "en": [
        "Can you write a migration that adds an index on orders.created_at?",
        "The staging deploy failed again, the health check times out after 30 seconds.",
        "As I said above, the service account must not get write access to production.",
        "Like I mentioned earlier, the feature flag stays off by default.",
        "How should we structure the on-call rotation for a team of five engineers?",
        "What's a sensible rate limit for an internal API that only the dashboard calls?",
        "Please review this pull request description and make it shorter.",
        "Why would a memory leak show up only after the nightly backup job runs?",
        "Going back to the query above, can we avoid the full table scan?",
        "Write a dry-run flag for the cleanup script that prints what it would delete.",
        "Which is better for value objects in Python, dataclasses or attrs?",
        "The build agents run out of disk space, how do I clean old Docker images?",
        "Explain what a read-only replica buys us compared to a cache.",
        "Rename the database connection settings so they match the new config layout.",
        "The error message for a failed login should tell the user what to do next.",
        "As discussed a moment ago, keep the retry count at three.",
        "Can you sort these code review comments by severity for me?",
        "We need a ticket for the flaky upload test, draft the description.",
        "What version of the client SDK introduced the new signing algorithm?",
        "The monitoring dashboard is slow to load, where should I start looking?",
    ],
    "zh": [
        "帮我写一个给 orders.created_at 加索引的迁移脚本。",
        "预发环境部署又失败了，健康检查三十秒就超时。",
        "刚才说了，服务账号不能有生产环境的写权限。",
        "像上面说的，这个功能开关默认是关的。",
        "五个人的小组值班轮换应该怎么排比较合理？",
        "只给监控面板调用的内部接口，限流设多少合适？",
        "帮我把这个合并请求的描述改短一点。",
        "为什么内存泄漏只在每晚备份任务跑完之后出现？",
        "回到上面那条查询，能不能避免全表扫描？",
        "给清理脚本加一个只打印不删除的参数。",
        "Python 里值对象用 dataclass 好还是 attrs 好？",
        "构建机的磁盘满了，怎么清理旧的 Docker 镜像？",
        "解释一下只读副本和缓存相比有什么好处。",
        "把数据库连接的配置项改个名字，跟新的配置结构对齐。",
        "登录失败的错误提示要告诉用户下一步怎么做。",
        "刚刚讨论的，重试次数保持三次就行。",
        "帮我把这些代码评审意见按严重程度排个序。",
        "那个上传测试老是不稳定，帮我写个工单描述。",
        "客户端 SDK 从哪个版本开始用新的签名算法？",
        "监控面板加载很慢，我应该从哪里开始查？",
    ],
}
