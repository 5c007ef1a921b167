"""A second held-out set of questions for bench/fidelity/fidelity.py, one per planted detail.

Written independently of the code under test and after its last change, never used to
tune it: each question asks about one statement from bench/fidelity_data.planted() the way
a user would many turns later, in the statement's language, without quoting its value."""

FRESH: dict[str, str] = {
    # en
    "For the billing timeout fix I edited src/billing/retry_policy.py and nothing else.":
        "billing timeout fix, which file did I touch?",
    "The login settings now live in ~/deploy/login/.env.production, remember to back it up.":
        "Remind me where the login settings ended up.",
    r"I moved the search job definitions into C:\Users\ops\search\settings.ini yesterday.":
        "Where did I move the search job defs to?",
    "For the upload timeout fix I edited /etc/upload/limits.yaml and nothing else.":
        "What did I change to fix the upload timeouts? Just the file path is fine.",
    "The newsletter settings now live in services/newsletter/config/app.toml, "
    "remember to back it up.":
        "newsletter config file, where's that living these days?",
    "I moved the backup job definitions into ./scripts/backup/nightly.sh yesterday.":
        "The backup jobs got moved somewhere yesterday, where do their definitions sit now?",
    "For the reporting timeout fix I edited /var/lib/reporting/cache/index.db and nothing else.":
        "Which file had the reporting timeout change in it?",
    "The payments settings now live in ../payments/gateway/keys.json, remember to back it up.":
        "I want to back up the payments settings, what's the path again?",
    "I moved the caching job definitions into infra/caching/redis.conf yesterday.":
        "Where are the caching job definitions now, after I moved them?",
    "For the scheduler timeout fix I edited ~/work/scheduler/cron.d/jobs.yml and nothing else.":
        "Quick one: the file I edited for the scheduler timeout, what was it?",
    "The billing dashboard is at https://grafana.example.com/d/billing-overview if you need it.":
        "Can you paste the billing dashboard URL again?",
    "Docs for the login API are here: https://auth.example.com/admin/login":
        "Link for the login API documentation?",
    "The search dashboard is at https://search.internal.example.net/console if you need it.":
        "Where's the search dashboard? I need the address.",
    "Docs for the upload API are here: https://docs.example.com/upload/v3":
        "Remind me where the upload API reference lives.",
    "The newsletter dashboard is at http://10.0.4.12:3000/newsletter if you need it.":
        "newsletter dashboard, what was the URL?",
    "Docs for the backup API are here: https://backup.example.org/status":
        "I lost the link to the backup API docs, do you still have it?",
    "The reporting dashboard is at https://bi.example.com/reports/weekly?team=ops if you need it.":
        "The reporting dashboard I mentioned a while back, what's its web address?",
    "Docs for the payments API are here: https://pay.example.com/api/v2/docs":
        "payments API docs url?",
    "The caching dashboard is at https://cache.example.io/stats if you need it.":
        "Where can I pull up the caching dashboard again?",
    "Docs for the scheduler API are here: https://jobs.example.com/scheduler/queue":
        "Send me the scheduler API docs link once more.",
    "The p95 latency of the billing endpoint was 340 ms in the load test.":
        "What p95 did the billing endpoint hit under load?",
    "The login service listens on port 8443 now.": "Which port is login on now?",
    "We budgeted $12,500 for the search migration.":
        "How much money did we set aside for moving search over?",
    "The p95 latency of the upload endpoint was 1.8 seconds in the load test.":
        "Upload endpoint latency in the load test, how bad was it?",
    "The newsletter service listens on port 6380 now.": "newsletter service port?",
    "We budgeted €4,200 for the backup migration.": "What budget did the backup migration get?",
    "The p95 latency of the reporting endpoint was 95 ms in the load test.":
        "Remind me of the reporting endpoint's p95 from the load test.",
    "The payments service listens on port 9090 now.":
        "Payments is listening on which port these days?",
    "We budgeted $7,300 for the caching migration.":
        "How much is earmarked for the caching migration?",
    "The p95 latency of the scheduler endpoint was 120 ms in the load test.":
        "Scheduler endpoint p95 in load testing, what number did we get?",
    "The billing cutover is scheduled for 2026-03-14 09:30.":
        "When's the billing cutover happening?",
    "The login outage started at 11:45 pm and lasted an hour.":
        "Remind me what time the login outage kicked off.",
    "The search cutover is scheduled for April 2nd.": "What day is the search switchover?",
    "The upload outage started at 2026-05-20 and lasted an hour.":
        "When did the upload outage begin?",
    "The newsletter cutover is scheduled for 06:15.":
        "newsletter cutover, what time is it planned for?",
    "The backup outage started at June 9th and lasted an hour.":
        "The backup outage, when did that start?",
    "The reporting cutover is scheduled for 2026-07-01 14:00.":
        "When are we doing the reporting cutover?",
    "The payments outage started at 3:20 am and lasted an hour.": "What time did payments go down?",
    "The caching cutover is scheduled for Sept 18.": "What date is the caching cutover on?",
    "The scheduler outage started at 2026-11-30 22:00 and lasted an hour.":
        "When exactly did the scheduler outage start?",
    "To restart billing run `kubectl rollout restart deploy/billing-api -n prod` on the bastion.":
        "How do I restart billing from the bastion?",
    "I reproduced the login bug with docker compose run --rm login-worker pytest -x "
    "tests/auth and it failed every time.":
        "What did I run to get the login bug to show up every time?",
    "To restart search run `systemctl restart search-indexer.service` on the bastion.":
        "search needs a restart, what's the command?",
    "I reproduced the upload bug with python -m upload.replay --since 2h --dry-run "
    "and it failed every time.":
        "The command that reproduced the upload bug, what was it?",
    "To restart newsletter run `make newsletter-restart ENV=staging` on the bastion.":
        "Remind me how to bounce the newsletter service.",
    "I reproduced the backup bug with git bisect run ./scripts/backup_check.sh and "
    "it failed every time.":
        "backup bug repro command?",
    "To restart reporting run `helm upgrade reporting ./charts/reporting "
    "--reuse-values` on the bastion.":
        "What do I run on the bastion to restart reporting?",
    "I reproduced the payments bug with curl -X POST "
    "localhost:8080/payments/retry?id=4711 and it failed every time.":
        "Which command kept triggering the payments bug?",
    "To restart caching run `redis-cli -p 6380 FLUSHDB ASYNC` on the bastion.":
        "How do I restart caching again?",
    "I reproduced the scheduler bug with sudo journalctl -u scheduler --since today "
    "and it failed every time.":
        "What was my repro for the scheduler bug?",
    "The billing worker crashed with ConnectionResetError: [Errno 104] Connection reset by peer":
        "What exception took down the billing worker?",
    "The login worker crashed with psycopg2.OperationalError: FATAL: too many "
    "connections for role app":
        "The login worker crash, what did the error say?",
    "The search worker crashed with TimeoutError: search shard 3 did not answer in 30s":
        "Remind me of the error message when the search worker died.",
    "The upload worker crashed with PermissionError: [Errno 13] Permission denied: "
    "'/srv/upload/tmp'":
        "Why did the upload worker crash, what was the error?",
    "The newsletter worker crashed with SMTPAuthenticationError: 535 5.7.8 Username "
    "and Password not accepted":
        "newsletter worker error, do you have the exact text?",
    "The backup worker crashed with tar: Unexpected EOF in archive; error is not recoverable":
        "What did the backup worker blow up with?",
    "The reporting worker crashed with KeyError: 'quarter' in reporting/build.py line 88":
        "The reporting worker crashed earlier, which error was it?",
    "The payments worker crashed with stripe.error.CardError: Your card was declined":
        "Paste the payments worker crash error again please.",
    "The caching worker crashed with redis.exceptions.ReadOnlyError: You can't write "
    "against a read only replica":
        "What was the caching worker's crash message?",
    "The scheduler worker crashed with panic: runtime error: invalid memory address "
    "or nil pointer dereference":
        "The scheduler worker died with some error, what was it exactly?",
    "The billing owner is named Priya Raman.": "Remind me who's in charge of billing.",
    "For login questions, contact Tomasz Kowalski directly.": "login question, who do I ping?",
    "Our search vendor rep is Amara Okafor, she answers fast.":
        "What's the name of our search vendor contact?",
    "The upload owner is named Lucas Moreau.": "Who's responsible for upload?",
    "For newsletter questions, contact Hana Suzuki directly.":
        "Who was the person to reach out to about the newsletter?",
    "Our backup vendor rep is Diego Alvarez, she answers fast.":
        "The backup vendor rep who replies quickly, what's her name?",
    "The reporting owner is named Ingrid Larsen.": "reporting has an owner, right? Who is it?",
    "For payments questions, contact Mateo Rossi directly.":
        "If I have a payments question, who do I go to?",
    "Our caching vendor rep is Fatima Zahra, she answers fast.": "Our caching vendor's rep, name?",
    "The scheduler owner is named Oliver Grant.": "Who's the scheduler owner again?",
    "We decided to use PostgreSQL instead of MongoDB for billing.":
        "Which database did we settle on for billing?",
    "Let's go with Keycloak for the login queue.": "login queue: which option did we land on?",
    "We decided to use OpenSearch for search.": "Which engine did we settle on for search?",
    "Let's go with S3 multipart uploads for the upload queue.":
        "Remind me what we went with for the upload queue.",
    "We decided to use SendGrid for newsletter.": "What did we choose for sending the newsletter?",
    "Let's go with restic with daily snapshots for the backup queue.":
        "backup queue, what was the call?",
    "We decided to use DuckDB for reporting.": "What tool did we go with for reporting?",
    "Let's go with RabbitMQ for the payments queue.":
        "Which broker did we agree on for the payments queue?",
    "We decided to use Redis with a 10 minute TTL for caching.":
        "What was our caching decision in the end?",
    "Let's go with Temporal for the scheduler queue.":
        "The scheduler queue, what did we agree to use there?",
    # zh
    "账单超时的修复只改了 src/billing/timeout.py 这个文件。": "账单超时修复动了哪个文件来着？",
    "登录的配置现在放在 ~/deploy/login/.env，记得备份。": "登录那套配置现在搁哪儿了？",
    r"搜索超时的修复只改了 D:\work\search\config.ini 这个文件。":
        "搜索超时那个问题，最后改的文件路径是啥？",
    "上传的配置现在放在 /etc/upload/quota.yaml，记得备份。": "上传的配置文件路径发我一下",
    "邮件超时的修复只改了 services/mail/templates/base.html 这个文件。":
        "邮件超时修的时候改了哪个文件？",
    "备份的配置现在放在 ./scripts/backup/full.sh，记得备份。": "备份相关的配置现在在哪个路径？",
    "报表超时的修复只改了 /var/lib/report/cache.db 这个文件。": "报表超时那个修复改的文件叫啥？",
    "支付的配置现在放在 ../pay/gateway/cert.pem，记得备份。": "支付的配置放哪儿了，我要备份一下",
    "缓存超时的修复只改了 infra/cache/memcached.conf 这个文件。":
        "之前修缓存超时，只改了哪个文件？",
    "调度的配置现在放在 ~/jobs/scheduler/tasks.yml，记得备份。": "调度配置文件的位置是啥来着？",
    "账单后台的地址是 https://admin.example.cn/billing ，有事可以看。": "账单后台网址再发我一下",
    "登录接口文档在这里：https://sso.example.cn/login/admin": "登录接口的文档链接是啥来着？",
    "搜索后台的地址是 https://search.example.cn/ops ，有事可以看。": "搜索的管理后台地址多少？",
    "上传接口文档在这里：https://oss.example.cn/upload/console": "上传接口文档的地址你还记得吗？",
    "邮件后台的地址是 https://mail.example.cn/campaigns ，有事可以看。":
        "邮件后台从哪儿进？给个链接",
    "备份接口文档在这里：https://backup.example.cn/jobs": "备份的接口文档在哪看？",
    "报表后台的地址是 https://bi.example.cn/report/daily ，有事可以看。":
        "报表后台那个地址是啥来着？",
    "支付接口文档在这里：https://pay.example.cn/notify/v2": "支付接口的文档网址发一下",
    "缓存后台的地址是 https://cache.example.cn/metrics ，有事可以看。": "缓存后台链接是哪个？",
    "调度接口文档在这里：https://cron.example.cn/tasks": "调度的API文档在哪儿来着？",
    "压测时账单接口的延迟是350毫秒。": "压测那会儿账单接口延迟有多高？",
    "登录服务现在监听端口 8081。": "登录服务跑在哪个端口上？",
    "搜索项目的预算定为12万元。": "搜索项目批了多少预算？",
    "压测时上传接口的延迟是1.2秒。": "上传接口压测出来延迟咋样？要具体数字",
    "邮件服务现在监听端口 6379。": "邮件服务现在用的端口号是多少来着？",
    "备份项目的预算定为3万5千元。": "备份那个项目预算定的多少钱？",
    "压测时报表接口的延迟是80毫秒。": "报表接口压测的延迟数据还记得吗？",
    "支付服务现在监听端口 9200。": "支付服务监听的是哪个端口？",
    "缓存项目的预算定为45万。": "缓存项目给了多少预算来着？",
    "压测时调度接口的延迟是每秒2000次。": "调度接口压测那个指标是多少？",
    "账单切换定在3月14日下午3点。": "账单啥时候切换？",
    "登录故障是晚上11点45分开始的，持续了一小时。": "登录挂掉是从几点开始的？",
    "搜索切换定在4月2日。": "搜索切换定的哪天？",
    "上传故障是2026年5月20日开始的，持续了一小时。": "上传出故障是哪天开始的？",
    "邮件切换定在早上6点15分。": "邮件那边切换安排在几点？",
    "备份故障是6月9号开始的，持续了一小时。": "备份故障是哪天开始的来着？",
    "报表切换定在7月1日下午2点。": "报表切换定在什么时间了？",
    "支付故障是凌晨3点20分开始的，持续了一小时。": "支付故障啥时候开始的？",
    "缓存切换定在9月18日。": "缓存那边哪天切？",
    "调度故障是11月30日晚上10点开始的，持续了一小时。": "调度出故障的开始时间是？",
    "重启账单要在跳板机上执行 `kubectl rollout restart deploy/billing -n prod`。":
        "账单要重启的话，跳板机上敲啥命令？",
    "登录的问题我用 docker compose restart sso 复现了。": "登录那个问题我当时是咋复现的？",
    "重启搜索要在跳板机上执行 `systemctl restart es-indexer`。": "搜索怎么重启来着？",
    "上传的问题我用 python manage.py replay_uploads --dry-run 复现了。":
        "上传问题复现用的那条命令是啥？",
    "重启邮件要在跳板机上执行 `make mail-restart ENV=prod`。": "邮件服务重启命令发我一下",
    "备份的问题我用 git bisect run ./check_backup.sh 复现了。": "备份的问题我拿啥命令复现出来的？",
    "重启报表要在跳板机上执行 `helm rollback report 3`。": "报表要重启，跳板机上执行啥？",
    "支付的问题我用 curl -X POST localhost:9000/pay/retry 复现了。":
        "支付那个bug是用哪条命令复现的来着？",
    "重启缓存要在跳板机上执行 `redis-cli -p 6379 INFO memory`。": "缓存咋重启？",
    "调度的问题我用 sudo crontab -u jobs -l 复现了。": "调度的问题当时怎么复现的？",
    "账单任务报错：ConnectionRefusedError: [Errno 111] Connection refused":
        "账单任务报错信息是啥来着？",
    "登录任务报错：数据库连接池耗尽：too many clients already": "登录任务那个报错具体是什么？",
    "搜索任务报错：ReadTimeout: 搜索集群 30 秒无响应": "搜索任务挂的时候报的啥？",
    "上传任务报错：OSError: [Errno 28] No space left on device": "上传任务出错的提示是什么？",
    "邮件任务报错：SMTP 550 错误：收件人被拒绝": "邮件任务失败的报错原文还有吗？",
    "备份任务报错：备份校验失败：checksum mismatch on volume 2": "备份任务报了个什么错来着？",
    "报表任务报错：ValueError: 报表日期格式错误": "报表任务的错误信息发我一下",
    "支付任务报错：支付回调签名验证失败：invalid signature": "支付任务报错说的是啥？",
    "缓存任务报错：MemoryError: 缓存预热时内存不足": "缓存任务那个错误是什么？",
    "调度任务报错：调度器异常：job 42 missed its deadline": "调度任务报错的内容还记得不？",
    "账单的负责人是王建国。": "账单是谁在管？",
    "登录有问题就找李晓明，他最清楚。": "登录有问题该找哪位？",
    "搜索的负责人是张丽华。": "搜索的负责人叫啥来着？",
    "上传有问题就找陈志强，他最清楚。": "上传那块出问题了找谁最清楚？",
    "邮件的负责人是刘芳。": "邮件归谁管？",
    "备份有问题就找赵磊，他最清楚。": "备份方面最懂的那个人叫啥？",
    "报表的负责人是孙悦。": "报表负责人是哪位？",
    "支付有问题就找周杰，他最清楚。": "支付出了问题我该联系谁？",
    "缓存的负责人是吴静。": "缓存的owner是谁？",
    "调度有问题就找郑浩，他最清楚。": "调度那边遇到问题，找哪个人问？",
    "我们决定账单用PostgreSQL。": "账单最后选的哪个数据库？",
    "登录那块就用Keycloak 做单点登录吧，定了。": "登录那块最后拍板用的啥？",
    "我们决定搜索用Elasticsearch。": "搜索选型最后定的哪个？",
    "上传那块就用分片上传吧，定了。": "上传那块方案是怎么定的？",
    "我们决定邮件用阿里云邮件推送。": "邮件发送最后决定用哪家？",
    "备份那块就用每天增量备份吧，定了。": "备份方案最后定了个啥？",
    "我们决定报表用ClickHouse。": "报表底层最后选了什么？",
    "支付那块就用RocketMQ吧，定了。": "支付那块定了用啥来着？",
    "我们决定缓存用Redis 缓存十分钟。": "缓存方案是怎么定的？",
    "调度那块就用XXL-JOB吧，定了。": "调度最后选的哪个框架？",
}
