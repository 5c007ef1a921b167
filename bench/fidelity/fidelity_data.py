"""bench/fidelity/fidelity.py's conversation: planted details, 10 per category in each language,
each with the question a person would ask about it later in other words, and unrelated filler
turns."""

from __future__ import annotations

import random
from dataclasses import dataclass

KINDS = ("path", "url", "number", "time", "command", "error", "name", "decision")
TOPICS_EN = ["billing", "login", "search", "upload", "newsletter", "backup", "reporting",
             "payments", "caching", "scheduler"]
TOPICS_ZH = ["账单", "登录", "搜索", "上传", "邮件", "备份", "报表", "支付", "缓存", "调度"]


@dataclass(frozen=True)
class Planted:
    kind: str
    language: str
    statement: str  # said once, early
    value: str  # what must reach the request
    probe: str  # asked later, in other words


# (statement, probe) per category, {t} the topic and {v} the value; the values, ten each.
EN = {
    "path": (
        [("For the {t} timeout fix I edited {v} and nothing else.",
          "Which file did we edit for the {t} timeout fix?"),
         ("The {t} settings now live in {v}, remember to back it up.",
          "Where do the {t} settings live again?"),
         ("I moved the {t} job definitions into {v} yesterday.",
          "What was the path of the {t} job definitions?")],
        ["src/billing/retry_policy.py", "~/deploy/login/.env.production",
         r"C:\Users\ops\search\settings.ini", "/etc/upload/limits.yaml",
         "services/newsletter/config/app.toml", "./scripts/backup/nightly.sh",
         "/var/lib/reporting/cache/index.db", "../payments/gateway/keys.json",
         "infra/caching/redis.conf", "~/work/scheduler/cron.d/jobs.yml"]),
    "url": (
        [("The {t} dashboard is at {v} if you need it.",
          "What's the link to the {t} dashboard?"),
         ("Docs for the {t} API are here: {v}",
          "Where were the {t} API docs?")],
        ["https://grafana.example.com/d/billing-overview", "https://auth.example.com/admin/login",
         "https://search.internal.example.net/console", "https://docs.example.com/upload/v3",
         "http://10.0.4.12:3000/newsletter", "https://backup.example.org/status",
         "https://bi.example.com/reports/weekly?team=ops", "https://pay.example.com/api/v2/docs",
         "https://cache.example.io/stats", "https://jobs.example.com/scheduler/queue"]),
    "number": (
        [("The p95 latency of the {t} endpoint was {v} in the load test.",
          "How slow was the {t} endpoint in the load test?"),
         ("The {t} service listens on port {v} now.",
          "What port does the {t} service use?"),
         ("We budgeted {v} for the {t} migration.",
          "How much did we budget for the {t} migration?")],
        ["340 ms", "8443", "$12,500", "1.8 seconds", "6380", "€4,200", "95 ms", "9090",
         "$7,300", "120 ms"]),
    "time": (
        [("The {t} cutover is scheduled for {v}.", "When is the {t} cutover?"),
         ("The {t} outage started at {v} and lasted an hour.",
          "What time did the {t} outage start?")],
        ["2026-03-14 09:30", "11:45 pm", "April 2nd", "2026-05-20", "06:15",
         "June 9th", "2026-07-01 14:00", "3:20 am", "Sept 18", "2026-11-30 22:00"]),
    "command": (
        [("To restart {t} run `{v}` on the bastion.",
          "What was the command to restart {t}?"),
         ("I reproduced the {t} bug with {v} and it failed every time.",
          "How did I reproduce the {t} bug?")],
        ["kubectl rollout restart deploy/billing-api -n prod",
         "docker compose run --rm login-worker pytest -x tests/auth",
         "systemctl restart search-indexer.service",
         "python -m upload.replay --since 2h --dry-run",
         "make newsletter-restart ENV=staging",
         "git bisect run ./scripts/backup_check.sh",
         "helm upgrade reporting ./charts/reporting --reuse-values",
         "curl -X POST localhost:8080/payments/retry?id=4711",
         "redis-cli -p 6380 FLUSHDB ASYNC",
         "sudo journalctl -u scheduler --since today"]),
    "error": (
        [("The {t} worker crashed with {v}",
          "What error did the {t} worker crash with?")],
        ["ConnectionResetError: [Errno 104] Connection reset by peer",
         "psycopg2.OperationalError: FATAL: too many connections for role app",
         "TimeoutError: search shard 3 did not answer in 30s",
         "PermissionError: [Errno 13] Permission denied: '/srv/upload/tmp'",
         "SMTPAuthenticationError: 535 5.7.8 Username and Password not accepted",
         "tar: Unexpected EOF in archive; error is not recoverable",
         "KeyError: 'quarter' in reporting/build.py line 88",
         "stripe.error.CardError: Your card was declined",
         "redis.exceptions.ReadOnlyError: You can't write against a read only replica",
         "panic: runtime error: invalid memory address or nil pointer dereference"]),
    "name": (
        [("The {t} owner is named {v}.", "Who owns {t}?"),
         ("For {t} questions, contact {v} directly.",
          "Who should I talk to about {t}?"),
         ("Our {t} vendor rep is {v}, she answers fast.",
          "Who's our {t} vendor rep?")],
        ["Priya Raman", "Tomasz Kowalski", "Amara Okafor", "Lucas Moreau", "Hana Suzuki",
         "Diego Alvarez", "Ingrid Larsen", "Mateo Rossi", "Fatima Zahra", "Oliver Grant"]),
    "decision": (
        [("We decided to use {v} for {t}.", "What did we decide to use for {t}?"),
         ("Let's go with {v} for the {t} queue.",
          "What did we pick for the {t} queue?")],
        ["PostgreSQL instead of MongoDB", "Keycloak", "OpenSearch", "S3 multipart uploads",
         "SendGrid", "restic with daily snapshots", "DuckDB", "RabbitMQ",
         "Redis with a 10 minute TTL", "Temporal"]),
}
ZH = {
    "path": (
        [("{t}超时的修复只改了 {v} 这个文件。", "{t}超时那次改的是哪个文件？"),
         ("{t}的配置现在放在 {v}，记得备份。", "{t}的配置放在哪来着？")],
        ["src/billing/timeout.py", "~/deploy/login/.env", r"D:\work\search\config.ini",
         "/etc/upload/quota.yaml", "services/mail/templates/base.html",
         "./scripts/backup/full.sh", "/var/lib/report/cache.db", "../pay/gateway/cert.pem",
         "infra/cache/memcached.conf", "~/jobs/scheduler/tasks.yml"]),
    "url": (
        [("{t}后台的地址是 {v} ，有事可以看。", "{t}后台的链接是什么？"),
         ("{t}接口文档在这里：{v}", "{t}接口文档在哪个网址？")],
        ["https://admin.example.cn/billing", "https://sso.example.cn/login/admin",
         "https://search.example.cn/ops", "https://oss.example.cn/upload/console",
         "https://mail.example.cn/campaigns", "https://backup.example.cn/jobs",
         "https://bi.example.cn/report/daily", "https://pay.example.cn/notify/v2",
         "https://cache.example.cn/metrics", "https://cron.example.cn/tasks"]),
    "number": (
        [("压测时{t}接口的延迟是{v}。", "{t}接口压测的延迟是多少来着？"),
         ("{t}服务现在监听端口 {v}。", "{t}服务的端口是多少？"),
         ("{t}项目的预算定为{v}。", "{t}项目预算多少？")],
        ["350毫秒", "8081", "12万元", "1.2秒", "6379", "3万5千元", "80毫秒", "9200",
         "45万", "每秒2000次"]),
    "time": (
        [("{t}切换定在{v}。", "{t}切换是什么时候？"),
         ("{t}故障是{v}开始的，持续了一小时。", "{t}故障几点开始的？")],
        ["3月14日下午3点", "晚上11点45分", "4月2日", "2026年5月20日", "早上6点15分",
         "6月9号", "7月1日下午2点", "凌晨3点20分", "9月18日", "11月30日晚上10点"]),
    "command": (
        [("重启{t}要在跳板机上执行 `{v}`。", "重启{t}的命令是什么？"),
         ("{t}的问题我用 {v} 复现了。", "{t}的问题是用什么命令复现的？")],
        ["kubectl rollout restart deploy/billing -n prod",
         "docker compose restart sso", "systemctl restart es-indexer",
         "python manage.py replay_uploads --dry-run", "make mail-restart ENV=prod",
         "git bisect run ./check_backup.sh", "helm rollback report 3",
         "curl -X POST localhost:9000/pay/retry", "redis-cli -p 6379 INFO memory",
         "sudo crontab -u jobs -l"]),
    "error": (
        [("{t}任务报错：{v}", "{t}任务报的什么错？")],
        ["ConnectionRefusedError: [Errno 111] Connection refused",
         "数据库连接池耗尽：too many clients already", "ReadTimeout: 搜索集群 30 秒无响应",
         "OSError: [Errno 28] No space left on device", "SMTP 550 错误：收件人被拒绝",
         "备份校验失败：checksum mismatch on volume 2", "ValueError: 报表日期格式错误",
         "支付回调签名验证失败：invalid signature", "MemoryError: 缓存预热时内存不足",
         "调度器异常：job 42 missed its deadline"]),
    "name": (
        [("{t}的负责人是{v}。", "{t}谁负责？"),
         ("{t}有问题就找{v}，他最清楚。", "{t}出问题找谁来着？")],
        ["王建国", "李晓明", "张丽华", "陈志强", "刘芳", "赵磊", "孙悦", "周杰", "吴静",
         "郑浩"]),
    "decision": (
        [("我们决定{t}用{v}。", "{t}最后决定用什么？"),
         ("{t}那块就用{v}吧，定了。", "{t}定的是什么方案？")],
        ["PostgreSQL", "Keycloak 做单点登录", "Elasticsearch", "分片上传", "阿里云邮件推送",
         "每天增量备份", "ClickHouse", "RocketMQ", "Redis 缓存十分钟", "XXL-JOB"]),
}


def planted(language: str) -> list[Planted]:
    """Ten per category; the i-th of a category is about topic i."""
    table, topics = (EN, TOPICS_EN) if language == "en" else (ZH, TOPICS_ZH)
    out = []
    for kind in KINDS:
        templates, values = table[kind]
        for i, value in enumerate(values):
            statement, probe = templates[i % len(templates)]
            t = topics[i]
            out.append(Planted(kind, language, statement.format(t=t, v=value), value,
                               probe.format(t=t)))
    return out


FILLER_EN = [
    "I have been reading about the history of tea, from the Tang dynasty to the clippers that "
    "raced it across the oceans. The way trade routes shaped what people drink is fascinating.",
    "Could you suggest a slow Sunday breakfast? Something with eggs, toast and a bit of fruit, "
    "nothing that takes more than half an hour to make.",
    "My garden is full of tomatoes this year, far more than we can eat. I am thinking of making "
    "sauce and giving some jars to the neighbours.",
    "What makes a good mystery novel? I like the ones where the clues are fair and the "
    "detective is a little odd but kind.",
    "We walked along the river after dinner. The light on the water was lovely and the ducks "
    "followed us for a while, hoping for bread.",
    "I want to learn to draw portraits. Should I start with pencils or charcoal, and how often "
    "should I practise to see progress?",
    "Tell me something interesting about octopuses. I heard they can open jars and recognise "
    "faces, which sounds almost unbelievable.",
    "The weather keeps changing between rain and sunshine, so I never know what to wear. Maybe "
    "a light jacket is the answer for every day.",
]
FILLER_ZH = [
    "最近在读一本讲茶叶历史的书，从唐朝一直讲到海上的运茶船，贸易路线怎样改变人们喝什么，"
    "真的很有意思。",
    "周末想做一顿慢悠悠的早餐，有鸡蛋、吐司和一点水果，最好半个小时以内能做好，你有什么建议？",
    "今年院子里的西红柿结得特别多，根本吃不完，我打算做点番茄酱，再分几瓶给邻居。",
    "你觉得一本好的推理小说需要什么？我喜欢线索公平、侦探有点古怪但很善良的那种。",
    "晚饭后我们沿着河边散步，水面上的光很好看，几只鸭子跟了我们一路，大概是想要面包。",
    "我想学画人像，应该先用铅笔还是炭笔？多久练一次才能看到进步？",
    "给我讲点关于章鱼的趣事吧，听说它们能打开瓶子还能认出人脸，听起来简直不可思议。",
    "天气一会儿下雨一会儿出太阳，我总是不知道该穿什么，也许每天带件薄外套就好了。",
]
REPLY_EN = ("Noted. That sounds good; tell me more whenever you like, and I will keep it in "
            "mind as we go.")
REPLY_ZH = "好的，记下了。听起来不错，随时可以多说一些，我会记着的。"


def filler(language: str, rng: random.Random) -> str:
    """An unrelated turn: two paragraphs of everyday talk (about 120 tokens)."""
    pool = FILLER_EN if language == "en" else FILLER_ZH
    return "\n\n".join(rng.sample(pool, 2))


def reply(language: str) -> str:
    return REPLY_EN if language == "en" else REPLY_ZH
