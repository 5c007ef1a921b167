"""Source in the languages the standard library cannot lend bench/fidelity/fidelity_work_data.py:
TypeScript, Go, Rust, SQL and shell, written as a working project's files are (30-150 lines),
so the ledger meets the identifiers, paths and numbers real pasted code is full of."""

from __future__ import annotations

TYPESCRIPT_RETRY = '''\
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "./logger";

export interface RetryOptions {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  retryOn?: (err: unknown) => boolean;
}

const DEFAULTS: RetryOptions = { attempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 };

export class HttpError extends Error {
  constructor(public readonly status: number, message: string, public readonly body?: string) {
    super(message);
    this.name = "HttpError";
  }
}

function isRetryable(err: unknown): boolean {
  if (err instanceof HttpError) {
    return err.status === 429 || err.status >= 500;
  }
  return err instanceof TypeError; // fetch throws TypeError on network failures
}

export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  log: Logger,
  opts: Partial<RetryOptions> = {},
): Promise<T> {
  const o = { ...DEFAULTS, ...opts };
  const retryOn = o.retryOn ?? isRetryable;
  let lastError: unknown;
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      lastError = err;
      if (!retryOn(err) || attempt === o.attempts) break;
      const jitter = Math.random() * o.baseDelayMs;
      const delay = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1) + jitter);
      log.warn({ attempt, delay, err: String(err) }, "retrying after failure");
      await sleep(delay);
    }
  }
  throw lastError;
}

export async function fetchJson<T>(url: string, init: RequestInit, log: Logger): Promise<T> {
  return withRetry(async (attempt) => {
    const headers = { ...init.headers, "x-attempt": `${attempt}` };
    const res = await fetch(url, { ...init, headers });
    if (!res.ok) {
      const what = `${init.method ?? "GET"} ${url} -> ${res.status}`;
      throw new HttpError(res.status, what, await res.text());
    }
    return (await res.json()) as T;
  }, log);
}
'''

TYPESCRIPT_STORE = '''\
import { create } from "zustand";
import { persist } from "zustand/middleware";
import { fetchJson } from "../lib/retry";
import { logger } from "../lib/logger";

export type OrderStatus = "draft" | "pending" | "paid" | "shipped" | "cancelled";

export interface OrderLine {
  sku: string;
  quantity: number;
  unitPriceCents: number;
}

export interface Order {
  id: string;
  customerId: string;
  status: OrderStatus;
  lines: OrderLine[];
  updatedAt: string;
}

interface OrdersState {
  byId: Record<string, Order>;
  loading: boolean;
  error?: string;
  load: (customerId: string) => Promise<void>;
  cancel: (orderId: string) => Promise<void>;
  totalCents: (orderId: string) => number;
}

const API = import.meta.env.VITE_API_URL ?? "http://localhost:3000";

export const useOrders = create<OrdersState>()(
  persist(
    (set, get) => ({
      byId: {},
      loading: false,
      async load(customerId) {
        set({ loading: true, error: undefined });
        try {
          const url = `${API}/customers/${customerId}/orders`;
          const orders = await fetchJson<Order[]>(url, {}, logger);
          set({ byId: Object.fromEntries(orders.map((o) => [o.id, o])), loading: false });
        } catch (err) {
          set({ loading: false, error: err instanceof Error ? err.message : String(err) });
        }
      },
      async cancel(orderId) {
        const order = get().byId[orderId];
        if (!order || order.status === "shipped") return;
        const url = `${API}/orders/${orderId}/cancel`;
        const updated = await fetchJson<Order>(url, { method: "POST" }, logger);
        set((s) => ({ byId: { ...s.byId, [orderId]: updated } }));
      },
      totalCents(orderId) {
        const order = get().byId[orderId];
        return order ? order.lines.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0) : 0;
      },
    }),
    { name: "orders-v2", partialize: (s) => ({ byId: s.byId }) },
  ),
);
'''

GO_WORKER = '''\
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Job is one unit of work pulled from the queue.
type Job struct {
	ID        int64
	Kind      string
	Payload   []byte
	Attempts  int
	NotBefore time.Time
}

type Queue interface {
	Claim(ctx context.Context, n int) ([]Job, error)
	Complete(ctx context.Context, id int64) error
	Fail(ctx context.Context, id int64, reason string, retryAt time.Time) error
}

type Handler func(ctx context.Context, job Job) error

var ErrPermanent = errors.New("permanent failure")

type Pool struct {
	Queue       Queue
	Handlers    map[string]Handler
	Concurrency int
	PollEvery   time.Duration
	Log         *slog.Logger
}

func (p *Pool) Run(ctx context.Context) error {
	jobs := make(chan Job)
	var wg sync.WaitGroup
	for i := 0; i < p.Concurrency; i++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			for job := range jobs {
				p.handle(ctx, worker, job)
			}
		}(i)
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	ticker := time.NewTicker(p.PollEvery)
	defer ticker.Stop()
	for {
		claimed, err := p.Queue.Claim(ctx, p.Concurrency)
		if err != nil {
			p.Log.Error("claim failed", "err", err)
		}
		for _, job := range claimed {
			select {
			case jobs <- job:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Pool) handle(ctx context.Context, worker int, job Job) {
	h, ok := p.Handlers[job.Kind]
	if !ok {
		_ = p.Queue.Fail(ctx, job.ID, fmt.Sprintf("no handler for %q", job.Kind), time.Time{})
		return
	}
	start := time.Now()
	err := h(ctx, job)
	log := p.Log.With("job", job.ID, "kind", job.Kind, "worker", worker, "took", time.Since(start))
	switch {
	case err == nil:
		if err := p.Queue.Complete(ctx, job.ID); err != nil {
			log.Error("complete failed", "err", err)
		}
	case errors.Is(err, ErrPermanent) || job.Attempts >= 8:
		log.Error("job failed for good", "err", err)
		_ = p.Queue.Fail(ctx, job.ID, err.Error(), time.Time{})
	default:
		backoff := time.Duration(1<<job.Attempts) * time.Second
		log.Warn("job failed, will retry", "err", err, "in", backoff)
		_ = p.Queue.Fail(ctx, job.ID, err.Error(), time.Now().Add(backoff))
	}
}
'''

GO_HANDLER = '''\
package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"example.com/shop/internal/orders"
)

type OrdersHandler struct {
	Store orders.Store
}

type listResponse struct {
	Items      []orders.Order `json:"items"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

func (h *OrdersHandler) List(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, "limit must be between 1 and 200")
			return
		}
		limit = n
	}
	items, next, err := h.Store.List(r.Context(), r.URL.Query().Get("cursor"), limit)
	if errors.Is(err, orders.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, "bad cursor")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not list orders")
		return
	}
	writeJSON(w, http.StatusOK, listResponse{Items: items, NextCursor: next})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
'''

RUST_PARSER = '''\
use std::collections::HashMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    List(Vec<Value>),
}

#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

pub fn parse(input: &str) -> Result<HashMap<String, Value>, ParseError> {
    let mut out = HashMap::new();
    for (i, raw) in input.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once('=').ok_or_else(|| ParseError {
            line: i + 1,
            message: format!("expected key = value, got {:?}", line),
        })?;
        let key = key.trim().to_string();
        if out.contains_key(&key) {
            return Err(ParseError { line: i + 1, message: format!("duplicate key {}", key) });
        }
        out.insert(key, parse_value(value.trim(), i + 1)?);
    }
    Ok(out)
}

fn parse_value(s: &str, line: usize) -> Result<Value, ParseError> {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| parse_value(p.trim(), line))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List);
    }
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return Ok(Value::Str(inner.replace("\\\\n", "\\n")));
    }
    match s {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => s.parse::<i64>().map(Value::Int).map_err(|e| ParseError {
            line,
            message: format!("bad value {:?}: {}", s, e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_strings() {
        let got = parse("name = \\"api\\"\\nports = [80, 443]\\n").unwrap();
        assert_eq!(got["name"], Value::Str("api".into()));
        assert_eq!(got["ports"], Value::List(vec![Value::Int(80), Value::Int(443)]));
    }

    #[test]
    fn rejects_duplicates() {
        let err = parse("a = 1\\na = 2").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
'''

SQL_MIGRATION = '''\
-- 0042_orders_partitioning.sql
-- Split orders by month so the nightly report stops scanning three years of rows.
BEGIN;

CREATE TABLE orders_new (
    id            BIGINT GENERATED ALWAYS AS IDENTITY,
    customer_id   BIGINT      NOT NULL REFERENCES customers (id),
    status        TEXT        NOT NULL
                  CHECK (status IN ('draft', 'pending', 'paid', 'shipped', 'cancelled')),
    total_cents   BIGINT      NOT NULL DEFAULT 0,
    currency      CHAR(3)     NOT NULL DEFAULT 'EUR',
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);

CREATE TABLE orders_2025_q4 PARTITION OF orders_new
    FOR VALUES FROM ('2025-10-01') TO ('2026-01-01');
CREATE TABLE orders_2026_q1 PARTITION OF orders_new
    FOR VALUES FROM ('2026-01-01') TO ('2026-04-01');
CREATE TABLE orders_2026_q2 PARTITION OF orders_new
    FOR VALUES FROM ('2026-04-01') TO ('2026-07-01');
CREATE TABLE orders_default PARTITION OF orders_new DEFAULT;

CREATE INDEX orders_new_customer_idx ON orders_new (customer_id, created_at DESC);
CREATE INDEX orders_new_status_idx ON orders_new (status) WHERE status IN ('pending', 'paid');

INSERT INTO orders_new (customer_id, status, total_cents, currency, created_at, updated_at)
SELECT customer_id, status, total_cents, currency, created_at, updated_at
FROM orders
WHERE created_at >= '2025-10-01';

ALTER TABLE orders RENAME TO orders_old;
ALTER TABLE orders_new RENAME TO orders;

CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER orders_touch BEFORE UPDATE ON orders
    FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

COMMIT;

-- report query the migration is for
SELECT date_trunc('day', created_at) AS day,
       count(*) FILTER (WHERE status = 'paid') AS paid,
       sum(total_cents) FILTER (WHERE status = 'paid') / 100.0 AS revenue
FROM orders
WHERE created_at >= now() - interval '30 days'
GROUP BY 1
ORDER BY 1;
'''

SHELL_DEPLOY = '''\
#!/usr/bin/env bash
# deploy.sh: build, push and roll out one service; stops at the first failure.
set -euo pipefail

SERVICE="${1:?usage: deploy.sh SERVICE [ENV]}"
ENV="${2:-staging}"
REGISTRY="registry.example.com/platform"
TAG="$(git rev-parse --short HEAD)-$(date +%Y%m%d%H%M)"
NAMESPACE="apps-${ENV}"

log() { printf '%s [deploy] %s\\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [[ -n "$(git status --porcelain)" ]]; then
  log "working tree is dirty, commit or stash first"
  exit 1
fi

log "building ${SERVICE}:${TAG}"
docker build --pull -t "${REGISTRY}/${SERVICE}:${TAG}" -f "services/${SERVICE}/Dockerfile" .
docker push "${REGISTRY}/${SERVICE}:${TAG}"

log "rolling out to ${NAMESPACE}"
kubectl -n "${NAMESPACE}" set image "deploy/${SERVICE}" "${SERVICE}=${REGISTRY}/${SERVICE}:${TAG}"
if ! kubectl -n "${NAMESPACE}" rollout status "deploy/${SERVICE}" --timeout=300s; then
  log "rollout failed, undoing"
  kubectl -n "${NAMESPACE}" rollout undo "deploy/${SERVICE}"
  exit 2
fi

for i in $(seq 1 10); do
  if curl -fsS "https://${SERVICE}.${ENV}.example.com/healthz" >/dev/null; then
    log "healthy after ${i} checks"
    exit 0
  fi
  sleep 3
done
log "not healthy after 30s"
exit 3
'''

SNIPPETS: dict[str, tuple[str, str]] = {
    # name -> (the path a person would say it is at, its text)
    "ts-retry": ("web/src/lib/retry.ts", TYPESCRIPT_RETRY),
    "ts-store": ("web/src/stores/orders.ts", TYPESCRIPT_STORE),
    "go-worker": ("internal/worker/pool.go", GO_WORKER),
    "go-handler": ("internal/api/orders.go", GO_HANDLER),
    "rust-parser": ("crates/conf/src/parse.rs", RUST_PARSER),
    "sql-migration": ("db/migrations/0042_orders_partitioning.sql", SQL_MIGRATION),
    "shell-deploy": ("scripts/deploy.sh", SHELL_DEPLOY),
}
