"""The words the record is written in: task statuses, line kinds, why content is withheld, and why a chain
check fails.

`StrEnum`s, so a member is the string stored in the database and written in an export (equal to it, and
`str()` of it); `graph/types/enums.py` shows the same members to GraphQL under the schema's names.
"""

from __future__ import annotations

from enum import StrEnum


class TaskStatus(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"
    STOPPED = "STOPPED"


class LineKind(StrEnum):
    STARTED = "STARTED"
    MODEL_CALL = "MODEL_CALL"
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    ASKED_FOR_HELP = "ASKED_FOR_HELP"
    SENT_BACK = "SENT_BACK"
    STOP_ASKED = "STOP_ASKED"
    ENDED = "ENDED"
    ERASED = "ERASED"
    REVIEWED = "REVIEWED"
    HELD = "HELD"
    RELEASED = "RELEASED"
    CONFIG_CHANGED = "CONFIG_CHANGED"


class ReviewVerdict(StrEnum):
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    NOTED = "NOTED"


class WithheldReason(StrEnum):
    """Why a turn's content is missing."""

    METADATA_ONLY = "METADATA_ONLY"
    RECORDING_OFF = "RECORDING_OFF"
    REDACTED = "REDACTED"
    ERASED = "ERASED"


class VerifyReason(StrEnum):
    """The one reason a chain check gives for the first fault it finds (SPEC 7.3)."""

    SEQUENCE = "SEQUENCE"
    LINK = "LINK"
    LINE_HASH = "LINE_HASH"
    SUMMARY_HASH = "SUMMARY_HASH"
    PAYLOAD_HASH = "PAYLOAD_HASH"
    ERASED_HAS_WORDS = "ERASED_HAS_WORDS"
    ERASURE_UNRECEIPTED = "ERASURE_UNRECEIPTED"
    TRUNCATED = "TRUNCATED"
    HEAD_MISMATCH = "HEAD_MISMATCH"
    BAD_CHECKPOINT = "BAD_CHECKPOINT"
    MALFORMED = "MALFORMED"
