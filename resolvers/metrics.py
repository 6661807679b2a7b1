"""The server's Prometheus metrics, and what counts them.

Under `agentlog serve --workers N` (N > 1) every process writes its values to PROMETHEUS_MULTIPROC_DIR and a
scrape of any one of them answers the sum over all of them (prometheus-client's multiprocess mode); gauges
add up the processes alive.
"""

from __future__ import annotations

import os
import time
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess,
)
from tortoise.connection import get_connection
from tortoise.exceptions import ConfigurationError

from models import settings

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
# Read as prometheus-client reads it, once as it is first imported: its values are kept per process from then on.
SHARED = bool(os.environ.get(MULTIPROCESS_DIR))
CONTENT_TYPE = CONTENT_TYPE_LATEST

REQUESTS = Counter(
    "agentlog_requests", "Requests answered, by operation and outcome code.", ["operation", "outcome"]
)
LATENCY = Histogram(
    "agentlog_request_duration_seconds", "Time from a request's arrival to its answer, by operation.", ["operation"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LINES = Counter(
    "agentlog_lines_appended",
    "Lines appended to the record; labelled by tenant only with AGENTLOG_METRICS_TENANT_LABEL, else tenant=\"\".",
    ["tenant"],
)
OTLP_SPANS = Counter("agentlog_otlp_spans", "OTLP spans received, taken or rejected.", ["outcome"])
VERIFY_FAILURES = Counter("agentlog_verify_failures", "Chains found broken by verifyTrace.")
WEBHOOK_ATTEMPTS = Counter(
    "agentlog_webhook_attempts", "Webhook delivery attempts, by outcome: delivered, failed (tried again later) or "
    "given_up (the last, 24 hours after its event).", ["outcome"]
)
SUBSCRIBERS = Gauge(
    "agentlog_subscribers", "Live taskEvents subscriptions.", multiprocess_mode="livesum"
)
POOL_IN_USE = Gauge(
    "agentlog_db_pool_in_use", "PostgreSQL connections of the pool lent out (0 on SQLite).",
    multiprocess_mode="livesum",
)

REPLICA_LAG = Gauge(
    "agentlog_replica_lag_seconds",
    "How far each read replica is behind the primary, as this process last measured it (AGENTLOG_READ_DATABASE_URLS).",
    ["replica"], multiprocess_mode="max",
)
REPLICA_UP = Gauge(
    "agentlog_replica_up", "1 while a read replica answers this process's probes, else 0.", ["replica"],
    multiprocess_mode="max",
)
READS = Counter(
    "agentlog_reads", "Reads answered with replicas configured, by the node that answered (primary, replica0, ...).",
    ["node"],
)


_answered: dict[tuple[str, str], tuple[Any, Any]] = {}
_pool_read_at = 0.0


def answered(operation: str, outcome: str, seconds: float) -> None:
    """Counts one request; the labelled series are looked up once per (operation, outcome), both bounded."""
    series = _answered.get((operation, outcome))
    if series is None:
        series = _answered[(operation, outcome)] = (REQUESTS.labels(operation, outcome), LATENCY.labels(operation))
    series[0].inc()
    series[1].observe(seconds)
    _refresh_pool(time.monotonic())


def _refresh_pool(at: float) -> None:
    """Reads the pool at most once a second, so each process's gauge stays current between its scrapes."""
    global _pool_read_at
    if at - _pool_read_at >= 1:
        _pool_read_at = at
        POOL_IN_USE.set(pool_in_use())


def lines_appended(tenant: str, count: int) -> None:
    LINES.labels(tenant if settings.metrics_tenant_label() else "").inc(count)


def otlp_spans(taken: int, rejected: int) -> None:
    """For the OTLP receiver: the spans of one export request it recorded and those it rejected."""
    OTLP_SPANS.labels("taken").inc(taken)
    OTLP_SPANS.labels("rejected").inc(rejected)


def replica_seen(name: str, up: bool, lag_s: float) -> None:
    REPLICA_UP.labels(name).set(1 if up else 0)
    REPLICA_LAG.labels(name).set(max(lag_s, 0) if lag_s != float("inf") else float("nan"))


def answered_by(node: str) -> None:
    READS.labels(node).inc()


def verify_failed() -> None:
    VERIFY_FAILURES.inc()


def webhook_attempt(outcome: str) -> None:
    WEBHOOK_ATTEMPTS.labels(outcome).inc()


def pool_in_use() -> int:
    """Connections lent out of the asyncpg pool, which tortoise-orm 1.1.9's asyncpg client keeps in its private
    `_pool`; 0 on SQLite (one connection, no pool) and outside a database context."""
    try:
        pool = getattr(get_connection("default"), "_pool", None)
    except (RuntimeError, ConfigurationError):
        return 0
    return 0 if pool is None else pool.get_size() - pool.get_idle_size()


def exposition() -> bytes:
    """The metrics in the Prometheus text format: this process's, or all processes' in multiprocess mode."""
    POOL_IN_USE.set(pool_in_use())
    if SHARED:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)
