"""What people paste into a coding chat, at a size asked for: real source files (the Python
standard library this interpreter ships, and bench/fidelity/fidelity_work_snippets.py), web-server
and application logs with timestamps and a few ERROR lines, JSON (an API's answer, structured log
lines) and stack traces (Python, Java). Deterministic for a given random.Random.

Sizes are in characters (CHARS_PER_TOKEN, as cl100k cuts each kind of paste): close enough to
scale a paste to a window without counting tokens for every draw.
"""

from __future__ import annotations

import json
import sysconfig
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from random import Random

from bench.fidelity.fidelity_work_snippets import SNIPPETS

# Measured with tiktoken on what this module makes: logs are dense with digits and punctuation.
CHARS_PER_TOKEN = {"source": 4.5, "log": 2.1, "json": 3.1, "trace": 4.0}
# Modules people paste while working: small and large, async, parsing, I/O.
STDLIB_FILES = (
    "asyncio/locks.py", "asyncio/queues.py", "asyncio/tasks.py", "asyncio/streams.py",
    "json/decoder.py", "json/encoder.py", "http/cookies.py", "http/client.py",
    "logging/handlers.py", "textwrap.py", "shlex.py", "functools.py", "contextlib.py",
    "dataclasses.py", "ipaddress.py", "argparse.py", "heapq.py", "sched.py", "csv.py",
    "configparser.py", "urllib/parse.py", "email/utils.py", "tomllib/_parser.py",
    "concurrent/futures/thread.py", "sqlite3/dump.py", "zipfile.py",
)


@cache
def stdlib_source(name: str) -> str:
    return (Path(sysconfig.get_path("stdlib")) / name).read_text(encoding="utf-8")


def source(rng: Random, chars: int) -> tuple[str, str]:
    """(path, text): a real file, or a stretch of whole lines of it when the size asked for is
    smaller (people paste the function they mean); files joined when one is not enough."""
    if chars < 6000 and rng.random() < 0.5:
        path, text = SNIPPETS[rng.choice(sorted(SNIPPETS))]
        return path, text
    name = rng.choice(STDLIB_FILES)
    text = stdlib_source(name)
    while len(text) < chars:
        more = rng.choice(STDLIB_FILES)
        text += f"\n\n# ---- {more} ----\n" + stdlib_source(more)
    if len(text) > chars:
        lines = text.splitlines(keepends=True)
        start = rng.randrange(max(1, len(lines) - chars // 40))
        out, size = [], 0
        for line in lines[start:]:
            if size + len(line) > chars and out:
                break
            out.append(line)
            size += len(line)
        text = "".join(out)
    return f"lib/python3/{name}", text


# ---- logs ------------------------------------------------------------------------------------

ROUTES = ("/api/v2/orders", "/api/v2/orders/{id}", "/api/v2/customers/{id}/orders",
          "/api/v2/cart", "/api/v2/checkout", "/healthz", "/static/app.{id}.js",
          "/api/v2/search?q=shoes&page={n}", "/api/v2/inventory/sku-{id}")
AGENTS = ('"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/17.4"',
          '"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36"',
          '"okhttp/4.12.0"', '"kube-probe/1.29"', '"python-httpx/0.27.0"')
APP_INFO = ("worker[{pid}] job=sync-inventory batch={n} processed {m} rows in {s}s",
            "http request method=GET path=/api/v2/orders status=200 duration_ms={m}",
            "cache hit ratio={r} keys={n} evicted={m}",
            "scheduler tick queue_depth={n} in_flight={m}",
            "db pool stats size=20 idle={n} waiting={m}",
            "payment webhook accepted provider=stripe event=evt_{hex} amount={m}")
APP_ERRORS = ("db.pool: timeout acquiring connection after 5000ms (size=20 waiting={n})",
              "http: upstream inventory-svc returned 503 after {m}ms retry={n}",
              "worker[{pid}] job {n} failed: KeyError: 'sku'",
              "payment webhook signature mismatch event=evt_{hex}",
              "cache: connection reset by peer (redis-primary:6379)")
LEVELS = ("INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN")


def _fill(rng: Random, template: str) -> str:
    return template.format(id=rng.randrange(1000, 99999), n=rng.randrange(1, 900),
                           m=rng.randrange(2, 4000), s=round(rng.uniform(0.1, 9), 2),
                           r=round(rng.random(), 3), pid=rng.randrange(100, 32000),
                           hex=f"{rng.getrandbits(40):010x}")


def _clock(rng: Random) -> datetime:
    return datetime(2026, 3, rng.randrange(1, 28), rng.randrange(0, 24), rng.randrange(60))


def nginx_log(rng: Random, chars: int) -> str:
    at, out, size = _clock(rng), [], 0
    while size < chars:
        at += timedelta(milliseconds=rng.randrange(5, 2500))
        status = rng.choices((200, 201, 204, 304, 404, 499, 502, 504),
                             (70, 5, 5, 8, 6, 2, 2, 2))[0]
        line = (f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)} - - "
                f"[{at:%d/%b/%Y:%H:%M:%S} +0000] \"{rng.choice(('GET', 'GET', 'POST', 'PUT'))} "
                f"{_fill(rng, rng.choice(ROUTES))} HTTP/1.1\" {status} {rng.randrange(0, 90000)} "
                f"\"-\" {rng.choice(AGENTS)} rt={rng.uniform(0.001, 3):.3f}")
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def app_log(rng: Random, chars: int) -> str:
    at, out, size = _clock(rng), [], 0
    while size < chars:
        at += timedelta(milliseconds=rng.randrange(1, 4000))
        if rng.random() < 0.08:
            level, text = "ERROR", _fill(rng, rng.choice(APP_ERRORS))
        else:
            level, text = rng.choice(LEVELS), _fill(rng, rng.choice(APP_INFO))
        line = f"{at:%Y-%m-%dT%H:%M:%S}.{rng.randrange(1000):03d}Z {level:5} {text}"
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


# ---- JSON ------------------------------------------------------------------------------------

def api_json(rng: Random, chars: int) -> str:
    """An orders API's paged answer, pretty-printed as people copy it from a browser."""
    items, size = [], 0
    while size < chars:
        lines = [{"sku": f"SKU-{rng.randrange(10000, 99999)}", "quantity": rng.randrange(1, 6),
                  "unit_price_cents": rng.randrange(199, 25000)}
                 for _ in range(rng.randrange(1, 4))]
        item = {"id": f"ord_{rng.getrandbits(48):012x}", "customer_id": rng.randrange(1, 90000),
                "status": rng.choice(("pending", "paid", "shipped", "cancelled")),
                "currency": rng.choice(("EUR", "USD", "CNY")), "lines": lines,
                "created_at": f"{_clock(rng):%Y-%m-%dT%H:%M:%S}Z",
                "shipping": {"carrier": rng.choice(("dhl", "ups", "sf-express")),
                             "tracking": f"{rng.getrandbits(36):09X}"}}
        items.append(item)
        size += len(json.dumps(item, indent=2)) + 4
    return json.dumps({"items": items, "next_cursor": f"c_{rng.getrandbits(32):08x}",
                       "total": len(items) + rng.randrange(0, 500)}, indent=2)


def json_log(rng: Random, chars: int) -> str:
    """Structured log lines, one JSON object each, as a log shipper stores them."""
    at, out, size = _clock(rng), [], 0
    while size < chars:
        at += timedelta(milliseconds=rng.randrange(1, 3000))
        error = rng.random() < 0.1
        entry = {"ts": f"{at:%Y-%m-%dT%H:%M:%S}.{rng.randrange(1000):03d}Z",
                 "level": "error" if error else rng.choice(("info", "info", "debug", "warn")),
                 "service": rng.choice(("gateway", "orders", "billing", "inventory")),
                 "msg": _fill(rng, rng.choice(APP_ERRORS if error else APP_INFO)),
                 "span_id": f"{rng.getrandbits(64):016x}", "duration_ms": rng.randrange(1, 5000)}
        line = json.dumps(entry)
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


# ---- stack traces ----------------------------------------------------------------------------

PY_FRAMES = (
    ("/srv/app/.venv/lib/python3.11/site-packages/starlette/routing.py", "handle"),
    ("/srv/app/.venv/lib/python3.11/site-packages/fastapi/routing.py", "app"),
    ("/srv/app/.venv/lib/python3.11/site-packages/sqlalchemy/engine/base.py",
     "_exec_single_context"),
    ("/srv/app/.venv/lib/python3.11/site-packages/sqlalchemy/orm/session.py", "execute"),
    ("/srv/app/.venv/lib/python3.11/site-packages/httpx/_client.py", "send"),
    ("/srv/app/app/orders/service.py", "place_order"),
    ("/srv/app/app/orders/repository.py", "save"),
    ("/srv/app/app/api/orders.py", "create_order"),
    ("/srv/app/app/payments/client.py", "charge"),
)
PY_ERRORS = ("sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key "
             "value violates unique constraint \"orders_pkey\"",
             "httpx.ReadTimeout: timed out",
             "KeyError: 'currency'",
             "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
             "ValueError: invalid literal for int() with base 10: ''")
JAVA_FRAMES = ("org.springframework.web.servlet.FrameworkServlet.service("
               "FrameworkServlet.java:897)",
               "org.springframework.transaction.interceptor.TransactionInterceptor.invoke("
               "TransactionInterceptor.java:119)",
               "org.hibernate.engine.jdbc.spi.SqlExceptionHelper.convert("
               "SqlExceptionHelper.java:113)",
               "com.zaxxer.hikari.pool.ProxyPreparedStatement.executeUpdate("
               "ProxyPreparedStatement.java:61)",
               "com.example.shop.orders.OrderService.place(OrderService.java:{n})",
               "com.example.shop.orders.OrderController.create(OrderController.java:{n})",
               "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker("
               "ThreadPoolExecutor.java:1144)",
               "java.base/java.lang.Thread.run(Thread.java:1583)")
JAVA_ERRORS = ("org.springframework.dao.DataIntegrityViolationException: could not execute "
               "statement",
               "java.lang.NullPointerException: Cannot invoke \"String.length()\" because "
               "\"sku\" is null",
               "java.net.SocketTimeoutException: Read timed out")


def python_trace(rng: Random) -> str:
    frames = rng.sample(PY_FRAMES, rng.randrange(4, len(PY_FRAMES)))
    out = ["Traceback (most recent call last):"]
    for path, func in frames:
        out.append(f'  File "{path}", line {rng.randrange(20, 2200)}, in {func}')
        out.append(f"    result = await {func}(request, *args, **kwargs)")
    out.append(rng.choice(PY_ERRORS))
    return "\n".join(out)


def java_trace(rng: Random) -> str:
    out = [f"{_clock(rng):%Y-%m-%d %H:%M:%S}.{rng.randrange(1000):03d} ERROR 1 --- "
           f"[nio-8080-exec-{rng.randrange(1, 10)}] o.a.c.c.C.[.[.[/].[dispatcherServlet] : "
           "Servlet.service() threw exception", rng.choice(JAVA_ERRORS)]
    for frame in JAVA_FRAMES:
        out.append("\tat " + frame.format(n=rng.randrange(40, 400)))
    out.append(f"Caused by: {rng.choice(JAVA_ERRORS)}")
    out += ["\tat " + f.format(n=rng.randrange(40, 400)) for f in JAVA_FRAMES[2:5]]
    out.append(f"\t... {rng.randrange(20, 90)} common frames omitted")
    return "\n".join(out)


def traces(rng: Random, chars: int) -> str:
    """One trace or several (the same failure seen again and again), up to `chars`."""
    out = [python_trace(rng) if rng.random() < 0.6 else java_trace(rng)]
    while sum(map(len, out)) < chars and len(out) < 40:
        out.append(python_trace(rng) if rng.random() < 0.6 else java_trace(rng))
    return "\n\n".join(out)
