"""Short sessions for bench/local/summary_local.py, four in English and four in Chinese, each with
what a good summary of it must keep.

Like our users' sessions: facts said in prose (names, numbers, paths, ids, a phone number, a
decision) mixed with a bit of code or a log line. Each ends as a compaction finds it: on the
assistant's reply, here a question back about the user's last request, so the request is still
open. `facts` are regexes (case-insensitive) a summary must match; `answer` is a regex that
matches a reply doing that last request (a unit file, a script, an email) instead of
summarising, and matches nothing in the session itself (the bench checks).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Session:
    name: str
    lang: str  # "en" | "zh": the users' language, which the summary must be written in
    turns: tuple[tuple[str, str], ...]  # (role, text), alternating, user first
    facts: tuple[tuple[str, str], ...]  # (label, regex)
    answer: str


SESSIONS: tuple[Session, ...] = (
    Session(
        "billing-move", "en",
        (("user", "Hi, I'm Priya Raman, I run the billing service at Northwind. We're moving it "
                  "from the old box to a new VM, billing-02.internal, this Friday."),
         ("assistant", "Nice to meet you, Priya. A Friday move is doable if we prepare today. "
                       "Where does the service keep its configuration, and what port does it "
                       "serve on?"),
         ("user", "The config lives in /srv/billing/config/settings.toml and the service listens "
                  "on port 8443. Last night it crashed with this:\n```\n2024-05-14 02:13:07 ERROR "
                  "pool.py:88 ConnectionResetError: [Errno 104] Connection reset by peer\n```"),
         ("assistant", "That error usually means the database closed an idle connection the "
                       "pool still held. Recycling pooled connections before the server's idle "
                       "timeout fixes it; a TCP keepalive helps too."),
         ("user", "OK. We decided to set pool_recycle = 300 and keep Postgres 15, no upgrade "
                  "before the move. If anything breaks over the weekend, call Tomás on "
                  "+1 415 555 0137."),
         ("assistant", "Good plan: pool_recycle at 300 seconds, Postgres 15 unchanged, and Tomás "
                       "as the weekend contact."),
         ("user", "Can you write the systemd unit file for the service on the new VM?"),
         ("assistant", "Sure. Before I write it: should the service run as a dedicated billing "
                       "user or as root?")),
        (("name", r"Priya Raman"), ("host", r"billing-02\.internal"),
         ("path", r"/srv/billing/config/settings\.toml"), ("port", r"8443"),
         ("decision", r"pool_recycle\W{0,5}300"), ("version", r"Postgres(QL)? ?15"),
         ("phone", r"415\W{0,2}555\W{0,2}0137"), ("contact", r"Tom[aá]s"),
         ("date", r"Friday")),
        r"\[Unit\]|ExecStart"),
    Session(
        "churn-report", "en",
        (("user", "I'm working on the churn report for Q3. The CSV is at ~/data/churn_q3.csv, "
                  "about 48,210 rows."),
         ("assistant", "Got it. Do you load it with pandas? Tell me what you run and what "
                       "goes wrong."),
         ("user", "This line\n```python\ndf = pd.read_csv(path, parse_dates=[\"signup\"])\n```\n"
                  "fails with KeyError: 'signup'. The header says signup_date."),
         ("assistant", "The column is called signup_date, so parse_dates must name it: "
                       "parse_dates=[\"signup_date\"]."),
         ("user", "Right, fixed. We agreed to drop customers with fewer than 3 orders, and a "
                  "customer counts as churned after 90 days without a purchase. My manager Dana "
                  "Whitfield wants the chart by Thursday."),
         ("assistant", "Understood: customers with fewer than 3 orders excluded, churn at 90 "
                       "days of inactivity, chart due Thursday for Dana."),
         ("user", "The ticket for this is DATA-4417. How do I export the chart as an SVG file?"),
         ("assistant", "Which library draws the chart: matplotlib or plotly?")),
        (("path", r"churn_q3\.csv"), ("rows", r"48,?210"), ("column", r"signup_date"),
         ("decision", r"(\b3\b|three)\s+orders"), ("threshold", r"90\s*days"),
         ("name", r"Dana Whitfield"), ("date", r"Thursday"), ("ticket", r"DATA-4417")),
        r"savefig|write_image"),
    Session(
        "lisbon-offsite", "en",
        (("user", "Help me plan our team offsite in Lisbon, 12-14 June, for 9 people."),
         ("assistant", "Happy to help. What's the budget, and is anything booked already?"),
         ("user", "Budget is €4,500 in total. The hotel is booked, reference HX-88213-LIS. Our "
                  "contact there is Marta Sousa, phone +351 912 345 678."),
         ("assistant", "Good. With the hotel settled, that leaves food, transport and one "
                       "activity. I'd suggest a boat trip on the Tagus or a day in Sintra."),
         ("user", "We decided against the boat trip; we'll do the Sintra day trip on the 13th "
                  "instead. Ken is vegetarian and Aisha can't eat nuts."),
         ("assistant", "Noted: Sintra on the 13th, a vegetarian option for Ken and nut-free "
                       "food for Aisha."),
         ("user", "Can you draft the invitation email to the team?"),
         ("assistant", "Happy to. Should it be a formal invitation or a casual note?")),
        (("city", r"Lisbon"), ("dates", r"12\s*(-|–|to)\s*14|June 12"), ("people", r"\b9\b|nine"),
         ("budget", r"4,?500"), ("booking", r"HX-88213-LIS"), ("name", r"Marta Sousa"),
         ("phone", r"912\W?345\W?678"), ("decision", r"Sintra"), ("diet", r"vegetarian"),
         ("allergy", r"nut")),
        r"Subject:|(Dear|Hi|Hello) (team|all|everyone)"),
    Session(
        "ci-rounding", "en",
        (("user", "Our CI on the repo acme/webshop fails since commit 3f9c2ab. The failing job "
                  "is test-integration."),
         ("assistant", "What does the failing test print?"),
         ("user", "This:\n```\nFAILED tests/test_cart.py::test_checkout_total - AssertionError: "
                  "assert 1999 == 2000\n```"),
         ("assistant", "Off by one cent: a float rounding somewhere in the total. Are prices "
                       "stored as floats or in cents?"),
         ("user", "In cents. We'll switch the total to Decimal with ROUND_HALF_UP. Jonas Berg "
                  "reviews it, but he's on leave until 3 March."),
         ("assistant", "Decimal with ROUND_HALF_UP will make 19.995 round to 20.00. Jonas can "
                       "review after 3 March."),
         ("user", "Good. Post updates in #webshop-ci. How do I rerun only that test on my "
                  "machine?"),
         ("assistant", "Do you run the tests with tox or with plain pytest?")),
        (("repo", r"acme/webshop"), ("commit", r"3f9c2ab"), ("job", r"test-integration"),
         ("test", r"test_checkout_total"), ("value", r"1999"),
         ("decision", r"ROUND_HALF_UP"), ("name", r"Jonas Berg"),
         ("date", r"3 March|March 3"), ("channel", r"#webshop-ci")),
        r"pytest\s+(-k|tests/)|tox -e"),
    Session(
        "mysql-upgrade", "zh",
        (("user", "你好，我是王磊，负责公司内部的订单系统。"
                  "我们打算下周三把数据库从 MySQL 5.7 升级到 8.0。"),
         ("assistant", "好的，王磊。升级前先确认一下配置和当前的连接情况，有没有遇到什么问题？"),
         ("user", "配置文件在 /opt/order/conf/db.yaml，连接池最大连接数现在是 200。"
                  "昨晚报了这个错：\n```\nERROR 1040 (HY000): Too many connections\n```"),
         ("assistant", "这是数据库的 max_connections 不够用了。可以调大这个参数，同时检查应用有没有"
                       "连接泄漏。"),
         ("user", "我们决定先把 max_connections 调到 500，升级窗口定在凌晨 1 点到 3 点。有问题打我"
                  "电话 138 1234 5678。"),
         ("assistant", "明白：max_connections 调到 500，下周三凌晨 1 点到 3 点升级，联系电话 "
                       "138 1234 5678。"),
         ("user", "帮我写一个回滚脚本吧？"),
         ("assistant", "可以。先确认一下：回滚时需要保留升级期间写入的新订单吗？")),
        (("name", r"王磊"), ("from", r"5\.7"), ("to", r"8\.0"),
         ("path", r"/opt/order/conf/db\.yaml"), ("pool", r"200"),
         ("error", r"1040|Too many connections"), ("decision", r"500"),
         ("window", r"1\s*点.{0,3}3\s*点|1:00.{0,3}3:00"), ("phone", r"138\W?1234\W?5678"),
         ("date", r"周三|星期三")),
        r"mysqldump|#!/bin/(ba)?sh|mysql\s+-u"),
    Session(
        "blank-homepage", "zh",
        (("user", "我们的小程序首页在 iOS 17 上白屏，安卓正常。负责前端的是李娜。"),
         ("assistant", "白屏一般是脚本报错导致渲染中断。控制台里有报错吗？"),
         ("user", "控制台日志：\n```\nTypeError: undefined is not an object (evaluating "
                  "'res.data.banners')\n```\n接口是 /api/v2/home/banners。"),
         ("assistant", "说明接口在 iOS 上返回的 res.data 是空的，代码直接取 banners 就崩了。"),
         ("user", "好，我们决定先用可选链 res?.data?.banners 做兜底，下个版本 3.8.2 再改接口。"
                  "工单号是 BUG-2291，本周五之前要发版。"),
         ("assistant", "明白：先加可选链兜底，3.8.2 再改接口，工单 BUG-2291，周五前发版。"),
         ("user", "你能帮我写个单元测试吗？"),
         ("assistant", "可以。你们用的是 Jest 还是 Vitest？")),
        (("platform", r"iOS\s*17"), ("name", r"李娜"), ("field", r"banners"),
         ("api", r"/api/v2/home/banners"), ("decision", r"可选链|\?\."),
         ("version", r"3\.8\.2"), ("ticket", r"BUG-2291"), ("date", r"周五|星期五")),
        r"describe\(|\bit\(|\btest\(|expect\("),
    Session(
        "renovation", "zh",
        (("user", "我家在装修，想请你帮我理一下。房子在杭州西湖区，面积 89 平方米。"),
         ("assistant", "好的。预算多少？施工队定了吗？"),
         ("user", "预算一共 18 万，施工队的负责人叫张建国，电话 139 8765 4321，合同编号 "
                  "HZ-2024-0371。"),
         ("assistant", "记下了。厨房台面和地板的材料选好了吗？"),
         ("user", "我们商量好了：厨房用石英石台面，不用大理石；地板选复合木地板。"
                  "水电改造 5 月 20 日开工。"),
         ("assistant", "明白：石英石台面、复合木地板，水电 5 月 20 日开工。"),
         ("user", "能帮我列一个水电验收清单吗？"),
         ("assistant", "可以。你想按施工阶段分开列，还是一张总表？")),
        (("city", r"杭州"), ("area", r"89"), ("budget", r"18\s*万|180,?000"),
         ("name", r"张建国"), ("phone", r"139\W?8765\W?4321"), ("contract", r"HZ-2024-0371"),
         ("decision", r"石英石"), ("floor", r"复合"), ("date", r"5\s*月\s*20|5/20|05-20")),
        r"打压|☐|□|\[ \]|检查项|验收项"),
    Session(
        "sales-report", "zh",
        (("user", "我在做 2023 年的销售报表，数据在 D:\\reports\\sales_2023.xlsx，大概 12 万行。"),
         ("assistant", "好的。你是用 pandas 读的吗？遇到什么问题了？"),
         ("user", "读的时候报错：\n```\nValueError: Excel file format cannot be determined, you "
                  "must specify an engine manually.\n```"),
         ("assistant", "指定引擎就行：pd.read_excel(path, engine=\"openpyxl\")。"),
         ("user", "可以了。我们定了口径：退款订单不算销售额，美元按汇率 7.1 换算。"
                  "老板陈静要周一看到结果。"),
         ("assistant", "明白：退款订单不计入，汇率 7.1，周一交给陈静。"),
         ("user", "项目编号是 FIN-0815。按月的柱状图怎么画？"),
         ("assistant", "你想用 matplotlib 还是 pandas 自带的 plot？")),
        (("file", r"sales_2023\.xlsx"), ("rows", r"12\s*万|120,?000"), ("engine", r"openpyxl"),
         ("decision", r"退款"), ("rate", r"7\.1"), ("name", r"陈静"), ("date", r"周一|星期一"),
         ("project", r"FIN-0815")),
        r"\.bar\(|kind\s*=\s*.?bar|plt\."),
)
