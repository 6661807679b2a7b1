"""Server settings: every AGENTLOG_* variable, parsed and checked by one class, read once at start.

A setting is one field of `Settings`; the README's configuration table is generated from these fields
(`agentlog settings`). `load()` reads the environment once, where the server or a command starts, and refuses a
bad value with one line naming it. An app keeps its `Settings` and runs every request and background loop under
them (`using`); `current()` answers the settings in effect, and outside any app the ones this process loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from models import hosts
from models.documents import read_documents

PREFIX = "AGENTLOG_"
DATABASE_SCHEMES = ("sqlite://", "postgres://", "postgresql://", "asyncpg://")
MIN_SECRET_BYTES = 32


def setting(default: Any, meaning: str, shown: str | None = None, **checks: Any) -> Any:
    """A field whose README row says `meaning`, with `shown` in place of a default that is not a literal."""
    return Field(default, description=meaning, json_schema_extra={"shown": shown} if shown else None, **checks)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True)

    database_url: str | None = setting(
        None,
        "`sqlite:///absolute/path.db`, `sqlite://relative.db` or `postgres://user@host:port/db`; tables are "
        "created and migrated on start. Several hosts (`postgres://user@h1:5432,h2:5432/db?"
        "target_session_attrs=read-write`): the server writes to whichever is the primary and finds a promoted "
        "standby by itself (`docs/scale.md`, \"Failover\")",
        shown="`sqlite://$PWD/agentlog.db`",
    )
    jwt_secret: SecretStr | None = setting(
        None,
        "HS256 key for kit tokens and `agentlog token`: 32 bytes or more, a shorter one is refused at start. Unset, a fixed development key is "
        "used only when no identity provider is set either, and `serve` then listens on loopback only",
        shown="a development key",
    )
    oidc_issuer: str | None = setting(
        None,
        "the identity provider's issuer URL: its keys are found through `/.well-known/openid-configuration`, and "
        "a provider token's `iss` must equal it ([docs/identity.md](docs/identity.md))",
        shown="none",
    )
    jwks_url: str | None = setting(
        None, "the provider's key set, fetched directly instead of through discovery (needs `AGENTLOG_OIDC_ISSUER`)",
        shown="from discovery", validate_default=True,
    )
    oidc_audience: str | None = setting(
        None,
        "comma-separated audiences a provider token's `aud` must name one of (required with a provider; include "
        "`AGENTLOG_OIDC_CLIENT_ID` for people who sign in through the inspector)",
        shown="none", validate_default=True,
    )
    oidc_client_id: str | None = setting(
        None,
        "the inspector's and GraphiQL's public client at the provider: set, they offer \"Sign in with your "
        "organisation\" (authorization code with PKCE)",
        shown="none",
    )
    claim_tenant: str = setting("tenant", "the provider token's claim holding the tenant (a dotted path reaches "
                                "a nested claim)", min_length=1)
    claim_roles: str = setting("roles", "the claim holding the person's roles or groups (a list, or one string)",
                               min_length=1)
    claim_name: str = setting("name", "the claim holding the person's display name", min_length=1)
    role_map: dict[str, list[str]] = setting(
        {}, "JSON object from a provider role or group to the agentlog role (or list of roles) it gives; "
        "those not named pass as they are",
        shown="`{}`",
    )
    cors_origins: str = setting(
        "", "comma-separated origins whose pages may call `/graphql`, `/export/*` and `/v1/traces` (never `*` "
        "with credentials)", shown="none",
    )
    trusted_documents: str | None = setting(
        None, "a JSON file from sha256 hex to GraphQL document; a request may send "
        "`extensions.persistedQuery.sha256Hash` alone", shown="none",
    )
    only_trusted_documents: bool = setting(
        False, "`true`: only the trusted documents run, for every caller but the kit (others answer `FORBIDDEN`)"
    )
    record_content: bool = setting(True, "`false` stores no content at all (turns say `RECORDING_OFF`)")
    transcript_row_cap: int = setting(5000, "rows in one session transcript before `truncated: true`", ge=1)
    max_query_depth: int = setting(20, "deeper queries are refused before they run", ge=1)
    max_aliases: int = setting(50, "queries with more aliases are refused", ge=1)
    max_tokens: int = setting(10000, "longer queries are refused", ge=1)
    max_list_rows: int = setting(
        100_000,
        "a list below a task asked for without `first` answers up to this many rows; past it, `BAD_INPUT` "
        "saying to page",
        ge=1,
    )
    signing_key: str | None = setting(
        None,
        "a file holding the checkpoint signing key: a C2SP private key (`PRIVATE+KEY+name+hash+key`) or a "
        "32-byte Ed25519 seed (raw or 64 hex digits, signing as `agentlog`). Several hosts sharing one "
        "database must be given the same file",
        shown="`$PWD/agentlog-signing.key`, made on first start",
    )
    max_body_bytes: int = setting(
        16 * 1024 * 1024, "a larger request body answers 413 before it is parsed, on every route", ge=1,
        shown="`16777216` (16 MiB)",
    )
    otlp_wait_s: float = setting(
        3600,
        "seconds an OTLP span waits (durably) for its agent parent before it hangs under a stand-in task; an "
        "agent's own span often ends minutes or hours after its children were exported",
        gt=0,
    )
    otlp_kept_mb: int = setting(
        32,
        "megabytes of waiting OTLP spans one process also keeps as mapped (each counted as three times its stored "
        "body), so the export that completes their trace need not read them back; the database stays their "
        "record. `0` keeps none",
        ge=0,
    )
    otlp_pass_spans: int = setting(
        2000,
        "spans one OTLP placing pass places in one transaction, at most: a trace whose spans could all be placed "
        "at once is placed in passes of about this many, parents first, each agent with its own model calls and "
        "tools, so memory and a transaction's length stay bounded whatever the trace holds",
        ge=1,
    )
    executor: Literal["fast", "stock"] = setting(
        "fast",
        "`fast` runs the shortcuts in `graph/fast/` for big nested reads (its executor, reading ahead, lazy objects); "
        "`stock` none of them, on graphql-core's own executor. Both answer byte for byte alike "
        "(`tests/test_executors.py`)",
    )
    subscriber_queue: int = setting(
        256, "events waiting for one subscriber before it is disconnected with `FELL_BEHIND`", ge=1
    )
    log_format: Literal["text", "json"] = setting("text", "`text`, or `json` for one JSON object per log line")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = setting("INFO", "the least severe level logged")
    metrics_tenant_label: bool = setting(
        False, "`true` labels `agentlog_lines_appended_total` by tenant (one series per tenant)"
    )
    idempotency_days: int = setting(7, "days an idempotency key is remembered", ge=1)
    retention_sweep_s: int = setting(
        3600, "seconds between two sweeps that forget work past its tenant's `retainDays`", ge=1
    )
    retention_floor_days: int = setting(
        183, "the fewest days `definePolicies` sets `retainDays` to without a `retentionBasis` (six months: the EU "
        "AI Act's Articles 19 and 26(6))", ge=0
    )
    gc_young: int = setting(
        20_000,
        "objects a server process allocates between two collections of Python's youngest generation (Python's "
        "own default is 700); a request that places a trace allocates tens of thousands that are freed as it "
        "ends. `0` leaves Python's default",
        ge=0,
    )
    read_database_urls: str | None = setting(
        None,
        "comma-separated `postgres://` URLs of streaming replicas of the database: queries and subscriptions read "
        "from one that is caught up, writes go to the primary (`docs/scale.md`, \"Read replicas\")",
        shown="none",
    )
    replica_max_lag_s: float = setting(
        5, "seconds a replica may lag behind the primary and still answer a read that sent no consistency token",
        gt=0,
    )
    webhook_allow_private: bool = setting(
        False, "`true` lets a webhook name a loopback, private or link-local address (a receiver on the same "
        "host or network); otherwise such a URL is refused when defined and each delivery to it is refused"
    )
    webhook_retry_s: float = setting(
        5, "seconds before a failed webhook delivery is first tried again; each wait is twice the one before "
        "(at most an hour), until 24 hours after the event, when it is given up", gt=0
    )
    webhook_timeout_s: float = setting(10, "seconds a webhook receiver has to answer one delivery", gt=0)
    webhook_sender: bool = setting(
        True, "`false`: this process sends no webhook deliveries and leaves them to the other processes sharing its "
        "database (their outbox is the database's, so any one sender delivers them all)"
    )

    @field_validator("read_database_urls")
    @classmethod
    def _replicas_of_postgres(cls, urls: str | None, info: Any) -> str | None:
        if urls is None:
            return None
        if not all(url.strip().startswith(DATABASE_SCHEMES[1:]) for url in urls.split(",")):
            raise ValueError("comma-separated PostgreSQL URLs (`postgres://user@host:port/db`)")
        if not str(info.data.get("database_url") or "").startswith(DATABASE_SCHEMES[1:]):
            raise ValueError("set only with a PostgreSQL AGENTLOG_DATABASE_URL, whose replicas they are")
        return urls

    @field_validator("jwt_secret")
    @classmethod
    def _long_enough(cls, secret: SecretStr | None) -> SecretStr | None:
        if secret is not None and len(secret.get_secret_value().encode()) < MIN_SECRET_BYTES:
            raise ValueError(f"{MIN_SECRET_BYTES} bytes or more, e.g. `openssl rand -hex 32`")
        return secret

    @field_validator("jwks_url")
    @classmethod
    def _issuer_beside_keys(cls, url: str | None, info: ValidationInfo) -> str | None:
        if url is not None and not info.data.get("oidc_issuer"):
            raise ValueError("set together with AGENTLOG_OIDC_ISSUER, which a token's `iss` is checked against")
        return url

    @field_validator("oidc_audience")
    @classmethod
    def _audience_with_issuer(cls, audience: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("oidc_issuer") and not listed(audience):
            raise ValueError("set while AGENTLOG_OIDC_ISSUER is: the audiences a provider token must name")
        return audience

    @field_validator("trusted_documents")
    @classmethod
    def _readable_documents(cls, path: str | None) -> str | None:
        if path is not None:
            read_documents(path)
        return path

    @field_validator("role_map", mode="before")
    @classmethod
    def _roles_as_lists(cls, found: Any) -> Any:
        if isinstance(found, dict):
            return {group: [roles] if isinstance(roles, str) else roles for group, roles in found.items()}
        return found

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(DATABASE_SCHEMES):
            raise ValueError(f"a URL starting with {', '.join(DATABASE_SCHEMES)}")
        if url is not None and url.startswith(DATABASE_SCHEMES[1:]):
            hosts.addresses(url)
        return url


def listed(text: str | None) -> tuple[str, ...]:
    """The parts of a comma-separated setting, each stripped, none empty."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def variable(name: str) -> str:
    return PREFIX + name.upper()


VARIABLES = tuple(variable(name) for name in Settings.model_fields)


class Refused(ValueError):
    """Settings with a refused value: one line per variable, naming it, its value and what it should be."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _explain(error: dict[str, Any], overrides: dict[str, Any]) -> str:
    field = str(error["loc"][0])
    name = variable(field)
    given = overrides[field] if field in overrides else os.environ.get(name)
    value = "(hidden)" if name == variable("jwt_secret") else repr(given)
    said = error["msg"].removeprefix("Value error, ")
    if not said.lower().startswith("input should"):
        said = f"it should be {said}"
    return f"{name}={value} is refused: {said[0].lower()}{said[1:]}."


def load(**overrides: Any) -> Settings:
    """The settings of the environment as it is now, each of `overrides` in place of its variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise Refused([_explain(error, overrides) for error in exc.errors()]) from exc


def problems() -> list[str]:
    """One line per variable whose value is refused, naming it, its value and what it should be."""
    try:
        load()
    except Refused as exc:
        return exc.lines
    return []


def unknown() -> list[str]:
    """AGENTLOG_* variables that name no setting (a misspelt one is otherwise silently ignored)."""
    return sorted(name for name in os.environ if name.startswith(PREFIX) and name not in VARIABLES)


_in_effect: ContextVar[Settings | None] = ContextVar("agentlog_settings", default=None)
_loaded: Settings | None = None


def current() -> Settings:
    """The settings of the app whose request or loop is running; outside any app, those this process loaded."""
    found = _in_effect.get()
    if found is not None:
        return found
    global _loaded
    if _loaded is None:
        _loaded = load()
    return _loaded


@contextmanager
def using(settings: Settings) -> Iterator[Settings]:
    """`current()` answers `settings` within the block, and in every task the block starts."""
    token = _in_effect.set(settings)
    try:
        yield settings
    finally:
        _in_effect.reset(token)


def _shown(field: Any) -> str:
    extra = field.json_schema_extra or {}
    if "shown" in extra:
        return extra["shown"]
    default = field.default
    return f"`{str(default).lower() if isinstance(default, bool) else default}`"


def reference() -> str:
    """The README's configuration table."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        rows.append(f"| `{variable(name)}` | {_shown(field)} | {field.description} |")
    return "\n".join(rows) + "\n"


def record_content() -> bool:
    return current().record_content


def transcript_row_cap() -> int:
    return current().transcript_row_cap


def max_depth() -> int:
    return current().max_query_depth


def max_aliases() -> int:
    return current().max_aliases


def max_tokens() -> int:
    return current().max_tokens


def max_list_rows() -> int:
    return current().max_list_rows


def subscriber_queue() -> int:
    return current().subscriber_queue


def log_format() -> str:
    return current().log_format


def log_level() -> str:
    return current().log_level


def metrics_tenant_label() -> bool:
    return current().metrics_tenant_label


def idempotency_days() -> int:
    return current().idempotency_days


def retention_sweep_s() -> int:
    return current().retention_sweep_s


def retention_floor_days() -> int:
    return current().retention_floor_days


def max_body_bytes() -> int:
    return current().max_body_bytes


def otlp_wait_s() -> float:
    return current().otlp_wait_s


def otlp_kept_bytes() -> int:
    return current().otlp_kept_mb * 1_000_000


def otlp_pass_spans() -> int:
    return current().otlp_pass_spans


def gc_young() -> int:
    return current().gc_young


def executor() -> str:
    return current().executor


def jwt_secret() -> str | None:
    secret = current().jwt_secret
    return secret.get_secret_value() if secret is not None else None


def oidc_issuer() -> str | None:
    return current().oidc_issuer


def jwks_url() -> str | None:
    return current().jwks_url


def oidc_audiences() -> tuple[str, ...]:
    return listed(current().oidc_audience)


def oidc_client_id() -> str | None:
    return current().oidc_client_id


def claim_paths() -> tuple[str, str, str]:
    found = current()
    return found.claim_tenant, found.claim_roles, found.claim_name


def role_map() -> dict[str, list[str]]:
    return current().role_map


def cors_origins() -> list[str]:
    return [origin.strip().rstrip("/") for origin in current().cors_origins.split(",") if origin.strip()]


def read_database_urls() -> list[str]:
    return list(listed(current().read_database_urls))


def replica_max_lag_s() -> float:
    return current().replica_max_lag_s


def webhook_allow_private() -> bool:
    return current().webhook_allow_private


def webhook_retry_s() -> float:
    return current().webhook_retry_s


def webhook_timeout_s() -> float:
    return current().webhook_timeout_s


def webhook_sender() -> bool:
    return current().webhook_sender
