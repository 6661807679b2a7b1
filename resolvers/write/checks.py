"""Input checks shared by the kit's writes. Each failure names the field at fault, in `field` (the path within
the mutation's input: `inputTokens`, `requester.id`, `lines[3].modelCall.costMicros`) and in its message."""

from __future__ import annotations

import uuid
from typing import Any

from models.record.chain import compact_json
from models.record.fast_json import compact_text
from models.errors import BadInput

NAME_CHARS = 200
PERSON_NAME_CHARS = 400
LINE_CHARS = 10_000
TEXT_CHARS = 1_000_000
JSON_BYTES = 1_000_000
MAX_LONG = 2**63 - 1


def uuid_of(field: str, value: str | None) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError) as exc:
        raise BadInput(f"{field}: {value!r} is not a UUID.", field=field) from exc


def text(field: str, value: str | None, cap: int = LINE_CHARS, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise BadInput(f"{field} is required.", field=field)
        return None
    if required and not value.strip():
        raise BadInput(f"{field} must not be empty.", field=field)
    if len(value) > cap:
        raise BadInput(f"{field} is {len(value)} characters long; at most {cap} are kept.", field=field)
    return value


def name(field: str, value: str | None, required: bool = False) -> str | None:
    return text(field, value, NAME_CHARS, required)


def count(field: str, value: int | None, least: int = 0) -> int | None:
    if value is None:
        return None
    if value < least:
        raise BadInput(f"{field} must be at least {least}, not {value}.", field=field)
    if value > MAX_LONG:
        raise BadInput(f"{field} is larger than a 64-bit integer.", field=field)
    return value


MAX_RETAIN_DAYS = 36500


def retain_days(days: int) -> int | None:
    """Days to keep ended work, or None (kept forever) for 0."""
    if days > MAX_RETAIN_DAYS:
        raise BadInput(f"retainDays is at most {MAX_RETAIN_DAYS}, not {days}.", field="retainDays")
    return days or None


def retention_basis(days: int | None, basis: str | None, floor: int) -> str | None:
    """Work kept fewer days than the floor needs a stated basis, kept with the policy; None keeps work forever."""
    if days is not None and days < floor and not (basis and basis.strip()):
        raise BadInput(
            f"retainDays: {days} days is under the {floor} days records are kept at least (AGENTLOG_RETENTION_FLOOR_DAYS); "
            "give retentionBasis, the reason this tenant may keep them for less.", field="retainDays",
        )
    return basis


def json_text(field: str, value: Any) -> str | None:
    if value is None:
        return None
    stored = compact_text(value)
    try:
        size = len(stored.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise BadInput(f"{field} holds text that is not Unicode (an unpaired surrogate).", field=field) from exc
    if size > JSON_BYTES:
        raise BadInput(f"{field} is more than {JSON_BYTES} bytes of JSON.", field=field)
    return stored


def json_object(at: str, parts: dict[str, Any]) -> str:
    """The parts as one JSON object, as `json_text` checks one value; a refusal names the part at fault: the
    one refused alone, else the largest."""
    stored = compact_text(parts)
    try:
        if len(stored.encode("utf-8")) <= JSON_BYTES:
            return stored
    except UnicodeEncodeError:
        pass
    for name, value in parts.items():
        json_text(f"{at}{name}", value)
    largest = max(parts, key=lambda name: len(compact_json(parts[name]).encode("utf-8")))
    raise BadInput(f"{at}{largest}: with the rest of the call's content it is more than {JSON_BYTES} bytes of JSON.",
                   field=f"{at}{largest}")


def names(field: str, values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    if len(values) > 100:
        raise BadInput(f"{field} lists more than 100 roles.", field=field)
    return [name(f"{field}[{i}]", v, required=True) for i, v in enumerate(values)]


def principal(field: str, value: dict | None, required: bool = False) -> dict | None:
    if value is None:
        if required:
            raise BadInput(f"{field} is required.", field=field)
        return None
    return {
        "id": name(f"{field}.id", value.get("id"), required=True),
        "name": text(f"{field}.name", value.get("name"), PERSON_NAME_CHARS),
    }
