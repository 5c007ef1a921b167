"""Held-out second phrasings of the fidelity benchmark's recall questions.

For every planted statement in bench/fidelity/fidelity_data.py this gives another way a user might
ask about it many turns later, in the statement's language. They were written by hand and
independently of the code under test (jarvis_tui was not read), so they serve as a
held-out set: a score on these is not tuned to that code's wording or heuristics.
"""

HELD_OUT: dict[str, str] = {
    # English
    "For the billing timeout fix I edited src/billing/retry_policy.py and nothing else.":
        "Remind me which file I touched when we fixed the billing timeouts?",
    "The login settings now live in ~/deploy/login/.env.production, remember to back it up.":
        "Where did we end up putting the login config? I need to back it up.",
    "I moved the search job definitions into C:\\Users\\ops\\search\\settings.ini yesterday.":
        "Where did I move the search jobs to?",
    "For the upload timeout fix I edited /etc/upload/limits.yaml and nothing else.":
        "upload timeouts — what file was it I changed for that?",
    ("The newsletter settings now live in services/newsletter/config/app.toml, remember to back "
     "it up."):
        "what's the path to the newsletter config file again?",
    "I moved the backup job definitions into ./scripts/backup/nightly.sh yesterday.":
        "Which file holds the backup job definitions now that I moved them?",
    "For the reporting timeout fix I edited /var/lib/reporting/cache/index.db and nothing else.":
        "For the reports timeout fix, what was the one file I edited?",
    "The payments settings now live in ../payments/gateway/keys.json, remember to back it up.":
        "remind me where the payment settings are kept now",
    "I moved the caching job definitions into infra/caching/redis.conf yesterday.":
        "Where did the cache jobs get moved to?",
    "For the scheduler timeout fix I edited ~/work/scheduler/cron.d/jobs.yml and nothing else.":
        "which file was the scheduler timeout patch in?",
    "The billing dashboard is at https://grafana.example.com/d/billing-overview if you need it.":
        "can you paste the billing dashboard URL again?",
    "Docs for the login API are here: https://auth.example.com/admin/login":
        "I need the login API reference — what was the URL?",
    "The search dashboard is at https://search.internal.example.net/console if you need it.":
        "search dashboard url?",
    "Docs for the upload API are here: https://docs.example.com/upload/v3":
        "Remind me where the documentation for the upload API lives.",
    "The newsletter dashboard is at http://10.0.4.12:3000/newsletter if you need it.":
        "How do I get to the newsletter dashboard again?",
    "Docs for the backup API are here: https://backup.example.org/status":
        "got the link for the backup API docs handy?",
    "The reporting dashboard is at https://bi.example.com/reports/weekly?team=ops if you need it.":
        "What's the URL for the reports dashboard?",
    "Docs for the payments API are here: https://pay.example.com/api/v2/docs":
        "Where do I find the payment API documentation online?",
    "The caching dashboard is at https://cache.example.io/stats if you need it.":
        "Send me the cache dashboard link again please.",
    "Docs for the scheduler API are here: https://jobs.example.com/scheduler/queue":
        "the scheduler API docs — what was that link?",
    "The p95 latency of the billing endpoint was 340 ms in the load test.":
        "What p95 did the billing endpoint hit under load?",
    "The login service listens on port 8443 now.":
        "which port is login on these days?",
    "We budgeted $12,500 for the search migration.":
        "How much money is set aside for moving search over?",
    "The p95 latency of the upload endpoint was 1.8 seconds in the load test.":
        "remind me of the upload endpoint's p95 from the load test",
    "The newsletter service listens on port 6380 now.":
        "newsletter service port?",
    "We budgeted €4,200 for the backup migration.":
        "How much were we allowing for migrating the backups?",
    "The p95 latency of the reporting endpoint was 95 ms in the load test.":
        "How fast was the reporting endpoint when we load tested it?",
    "The payments service listens on port 9090 now.":
        "What port should I hit for the payment service?",
    "We budgeted $7,300 for the caching migration.":
        "what's the budget on the cache migration again?",
    "The p95 latency of the scheduler endpoint was 120 ms in the load test.":
        "What latency did the scheduler endpoint show in the load test?",
    "The billing cutover is scheduled for 2026-03-14 09:30.":
        "When are we switching billing over?",
    "The login outage started at 11:45 pm and lasted an hour.":
        "the login outage — when exactly did it begin?",
    "The search cutover is scheduled for April 2nd.":
        "what date is the search cutover planned for?",
    "The upload outage started at 2026-05-20 and lasted an hour.":
        "When did the upload outage kick off?",
    "The newsletter cutover is scheduled for 06:15.":
        "What time are we doing the newsletter switchover?",
    "The backup outage started at June 9th and lasted an hour.":
        "Remind me when the backup outage began.",
    "The reporting cutover is scheduled for 2026-07-01 14:00.":
        "Reporting cutover — what slot did we book for it?",
    "The payments outage started at 3:20 am and lasted an hour.":
        "What time did payments go down?",
    "The caching cutover is scheduled for Sept 18.":
        "When do we cut over the cache?",
    "The scheduler outage started at 2026-11-30 22:00 and lasted an hour.":
        "When did the scheduler fall over — do you have the start time?",
    "To restart billing run `kubectl rollout restart deploy/billing-api -n prod` on the bastion.":
        "how do I bounce billing from the bastion again?",
    ("I reproduced the login bug with docker compose run --rm login-worker pytest -x tests/auth "
     "and it failed every time."):
        "Which command did I use to make the login bug show up every time?",
    "To restart search run `systemctl restart search-indexer.service` on the bastion.":
        "search needs a restart — what do I type?",
    ("I reproduced the upload bug with python -m upload.replay --since 2h --dry-run and it "
     "failed every time."):
        "remind me of the command I used to repro the upload bug",
    "To restart newsletter run `make newsletter-restart ENV=staging` on the bastion.":
        "What's the restart command for the newsletter?",
    ("I reproduced the backup bug with git bisect run ./scripts/backup_check.sh and it failed "
     "every time."):
        "How did I get the backup bug to fail reliably — what did I run?",
    ("To restart reporting run `helm upgrade reporting ./charts/reporting --reuse-values` on the "
     "bastion."):
        "Reporting is stuck; what's the command to restart it?",
    ("I reproduced the payments bug with curl -X POST localhost:8080/payments/retry?id=4711 and "
     "it failed every time."):
        "what command reproduced the payments issue?",
    "To restart caching run `redis-cli -p 6380 FLUSHDB ASYNC` on the bastion.":
        "How do I restart the cache on the bastion?",
    ("I reproduced the scheduler bug with sudo journalctl -u scheduler --since today and it "
     "failed every time."):
        "What did I run when I was reproducing the scheduler bug?",
    "The billing worker crashed with ConnectionResetError: [Errno 104] Connection reset by peer":
        "What was the exception when the billing worker died?",
    ("The login worker crashed with psycopg2.OperationalError: FATAL: too many connections for "
     "role app"):
        "remind me what the login worker blew up with",
    "The search worker crashed with TimeoutError: search shard 3 did not answer in 30s":
        "what error message did we get from the search worker crash?",
    ("The upload worker crashed with PermissionError: [Errno 13] Permission denied: "
     "'/srv/upload/tmp'"):
        "The upload worker crash — what did the traceback say?",
    ("The newsletter worker crashed with SMTPAuthenticationError: 535 5.7.8 Username and "
     "Password not accepted"):
        "What did the newsletter worker fail with?",
    "The backup worker crashed with tar: Unexpected EOF in archive; error is not recoverable":
        "what was that backup worker error again?",
    "The reporting worker crashed with KeyError: 'quarter' in reporting/build.py line 88":
        "Which exception took down the reports worker?",
    "The payments worker crashed with stripe.error.CardError: Your card was declined":
        "Remind me of the error from when the payment worker crashed.",
    ("The caching worker crashed with redis.exceptions.ReadOnlyError: You can't write against a "
     "read only replica"):
        "the cache worker crash — exact error?",
    ("The scheduler worker crashed with panic: runtime error: invalid memory address or nil "
     "pointer dereference"):
        "What did the scheduler worker print when it crashed?",
    "The billing owner is named Priya Raman.":
        "who's in charge of billing?",
    "For login questions, contact Tomasz Kowalski directly.":
        "If I have a question about login, who do I ping?",
    "Our search vendor rep is Amara Okafor, she answers fast.":
        "what's the name of the search vendor's rep, the one who replies quickly?",
    "The upload owner is named Lucas Moreau.":
        "Whose area is uploads?",
    "For newsletter questions, contact Hana Suzuki directly.":
        "newsletter questions go to whom again?",
    "Our backup vendor rep is Diego Alvarez, she answers fast.":
        "What was the name of the person at the backup vendor we deal with?",
    "The reporting owner is named Ingrid Larsen.":
        "Who's the owner of the reports side?",
    "For payments questions, contact Mateo Rossi directly.":
        "Who's the go-to person for payment questions?",
    "Our caching vendor rep is Fatima Zahra, she answers fast.":
        "remind me who our contact at the caching vendor is",
    "The scheduler owner is named Oliver Grant.":
        "who's responsible for the scheduler?",
    "We decided to use PostgreSQL instead of MongoDB for billing.":
        "What did we land on for billing in the end?",
    "Let's go with Keycloak for the login queue.":
        "Which option did we go with for the login queue?",
    "We decided to use OpenSearch for search.":
        "What did we end up choosing as the search engine?",
    "Let's go with S3 multipart uploads for the upload queue.":
        "For the upload queue, what was the call we made?",
    "We decided to use SendGrid for newsletter.":
        "Which provider did we settle on for the newsletter?",
    "Let's go with restic with daily snapshots for the backup queue.":
        "what approach did we agree on for the backup queue?",
    "We decided to use DuckDB for reporting.":
        "what tool did we decide on for reporting?",
    "Let's go with RabbitMQ for the payments queue.":
        "What's the payments queue going to run on?",
    "We decided to use Redis with a 10 minute TTL for caching.":
        "remind me what we agreed for the caching setup",
    "Let's go with Temporal for the scheduler queue.":
        "scheduler queue — what did we go with?",
    # Chinese
    "账单超时的修复只改了 src/billing/timeout.py 这个文件。":
        "之前修账单超时动的是哪个文件来着？",
    "登录的配置现在放在 ~/deploy/login/.env，记得备份。":
        "登录那个配置文件放哪儿了？我想备份一下",
    "搜索超时的修复只改了 D:\\work\\search\\config.ini 这个文件。":
        "搜索超时那个问题，最后改的文件叫啥？",
    "上传的配置现在放在 /etc/upload/quota.yaml，记得备份。":
        "上传相关的配置现在在哪个路径下？",
    "邮件超时的修复只改了 services/mail/templates/base.html 这个文件。":
        "提醒我一下，修邮件超时只动了哪个文件？",
    "备份的配置现在放在 ./scripts/backup/full.sh，记得备份。":
        "备份的配置文件路径是啥来着？",
    "报表超时的修复只改了 /var/lib/report/cache.db 这个文件。":
        "报表超时那个修复，文件路径发我一下",
    "支付的配置现在放在 ../pay/gateway/cert.pem，记得备份。":
        "支付配置现在挪到哪了？",
    "缓存超时的修复只改了 infra/cache/memcached.conf 这个文件。":
        "缓存超时是改哪个文件修好的？",
    "调度的配置现在放在 ~/jobs/scheduler/tasks.yml，记得备份。":
        "调度那边的配置搁哪儿了来着？",
    "账单后台的地址是 https://admin.example.cn/billing ，有事可以看。":
        "账单后台网址再发我一下？",
    "登录接口文档在这里：https://sso.example.cn/login/admin":
        "登录接口的文档链接是啥？",
    "搜索后台的地址是 https://search.example.cn/ops ，有事可以看。":
        "搜索后台怎么进来着？地址多少",
    "上传接口文档在这里：https://oss.example.cn/upload/console":
        "上传的接口文档去哪看？",
    "邮件后台的地址是 https://mail.example.cn/campaigns ，有事可以看。":
        "邮件那个管理后台的网址还记得吗？",
    "备份接口文档在这里：https://backup.example.cn/jobs":
        "备份接口文档的链接给我一下",
    "报表后台的地址是 https://bi.example.cn/report/daily ，有事可以看。":
        "报表后台地址多少来着？",
    "支付接口文档在这里：https://pay.example.cn/notify/v2":
        "支付的接口文档在哪，把链接发我",
    "缓存后台的地址是 https://cache.example.cn/metrics ，有事可以看。":
        "缓存后台的网址是啥？",
    "调度接口文档在这里：https://cron.example.cn/tasks":
        "调度那套接口的文档地址是什么来着？",
    "压测时账单接口的延迟是350毫秒。":
        "上次压测，账单接口响应要多久？",
    "登录服务现在监听端口 8081。":
        "登录服务现在走哪个端口？",
    "搜索项目的预算定为12万元。":
        "搜索项目批了多少钱？",
    "压测时上传接口的延迟是1.2秒。":
        "上传接口压测时有多慢？",
    "邮件服务现在监听端口 6379。":
        "邮件服务现在开在哪个端口上？",
    "备份项目的预算定为3万5千元。":
        "备份项目给了多少预算来着？",
    "压测时报表接口的延迟是80毫秒。":
        "报表那个接口压测下来响应时间是多少？",
    "支付服务现在监听端口 9200。":
        "支付服务端口号多少？",
    "缓存项目的预算定为45万。":
        "缓存项目的预算是多少钱来着？",
    "压测时调度接口的延迟是每秒2000次。":
        "调度接口压测那个数是多少来着？",
    "账单切换定在3月14日下午3点。":
        "账单哪天切换？几点？",
    "登录故障是晚上11点45分开始的，持续了一小时。":
        "登录那次故障是几点开始出问题的？",
    "搜索切换定在4月2日。":
        "搜索定在哪天切？",
    "上传故障是2026年5月20日开始的，持续了一小时。":
        "上传出故障是哪天开始的？",
    "邮件切换定在早上6点15分。":
        "邮件切换安排在什么时间？",
    "备份故障是6月9号开始的，持续了一小时。":
        "备份故障什么时候开始的来着？",
    "报表切换定在7月1日下午2点。":
        "报表什么时候切过去？",
    "支付故障是凌晨3点20分开始的，持续了一小时。":
        "支付那次挂了是几点开始的？",
    "缓存切换定在9月18日。":
        "缓存切换排在哪天？",
    "调度故障是11月30日晚上10点开始的，持续了一小时。":
        "调度出故障是什么时候的事？",
    "重启账单要在跳板机上执行 `kubectl rollout restart deploy/billing -n prod`。":
        "账单要重启的话敲什么命令？",
    "登录的问题我用 docker compose restart sso 复现了。":
        "登录那个问题我当时是怎么复现的？",
    "重启搜索要在跳板机上执行 `systemctl restart es-indexer`。":
        "搜索怎么重启来着？",
    "上传的问题我用 python manage.py replay_uploads --dry-run 复现了。":
        "上传的问题复现用的命令发我一下",
    "重启邮件要在跳板机上执行 `make mail-restart ENV=prod`。":
        "在跳板机上重启邮件要跑啥？",
    "备份的问题我用 git bisect run ./check_backup.sh 复现了。":
        "备份那个 bug 我是拿什么命令复现出来的？",
    "重启报表要在跳板机上执行 `helm rollback report 3`。":
        "报表重启命令是啥来着？",
    "支付的问题我用 curl -X POST localhost:9000/pay/retry 复现了。":
        "支付那个问题复现的时候我敲的是什么？",
    "重启缓存要在跳板机上执行 `redis-cli -p 6379 INFO memory`。":
        "缓存要重启，命令怎么写？",
    "调度的问题我用 sudo crontab -u jobs -l 复现了。":
        "调度的问题，我复现时跑的那条命令还记得吗？",
    "账单任务报错：ConnectionRefusedError: [Errno 111] Connection refused":
        "账单任务挂的时候报的啥错？",
    "登录任务报错：数据库连接池耗尽：too many clients already":
        "登录任务的报错信息是什么来着？",
    "搜索任务报错：ReadTimeout: 搜索集群 30 秒无响应":
        "搜索任务那个报错原文是啥？",
    "上传任务报错：OSError: [Errno 28] No space left on device":
        "上传任务出错时提示的是什么？",
    "邮件任务报错：SMTP 550 错误：收件人被拒绝":
        "邮件任务报错内容再说一下？",
    "备份任务报错：备份校验失败：checksum mismatch on volume 2":
        "备份任务失败报的错误是啥？",
    "报表任务报错：ValueError: 报表日期格式错误":
        "报表任务那个错误信息你还记得吗？",
    "支付任务报错：支付回调签名验证失败：invalid signature":
        "支付任务当时报了什么错来着？",
    "缓存任务报错：MemoryError: 缓存预热时内存不足":
        "缓存那个任务出的是什么错？",
    "调度任务报错：调度器异常：job 42 missed its deadline":
        "调度任务的报错是什么？",
    "账单的负责人是王建国。":
        "账单这块归谁管？",
    "登录有问题就找李晓明，他最清楚。":
        "登录有问题该找哪位？",
    "搜索的负责人是张丽华。":
        "搜索的负责人叫啥来着？",
    "上传有问题就找陈志强，他最清楚。":
        "上传出了状况我去问谁？",
    "邮件的负责人是刘芳。":
        "邮件那块的负责人是哪位？",
    "备份有问题就找赵磊，他最清楚。":
        "备份的事谁最清楚？",
    "报表的负责人是孙悦。":
        "报表归谁管来着？",
    "支付有问题就找周杰，他最清楚。":
        "支付有问题联系谁？",
    "缓存的负责人是吴静。":
        "缓存的 owner 是谁？",
    "调度有问题就找郑浩，他最清楚。":
        "调度出事了该找哪个同事？",
    "我们决定账单用PostgreSQL。":
        "账单那边最后定了用啥？",
    "登录那块就用Keycloak 做单点登录吧，定了。":
        "登录那块最后拍板用什么了？",
    "我们决定搜索用Elasticsearch。":
        "搜索选的是哪个方案来着？",
    "上传那块就用分片上传吧，定了。":
        "上传最后定的做法是啥？",
    "我们决定邮件用阿里云邮件推送。":
        "邮件最后决定走哪家服务？",
    "备份那块就用每天增量备份吧，定了。":
        "备份方案最后怎么定的？",
    "我们决定报表用ClickHouse。":
        "报表决定用啥来着？",
    "支付那块就用RocketMQ吧，定了。":
        "支付那块拍板用的什么？",
    "我们决定缓存用Redis 缓存十分钟。":
        "缓存这边最后定的方案是什么？",
    "调度那块就用XXL-JOB吧，定了。":
        "调度最后选了哪个？",
}
