"""The words the record is written in: task statuses, line kinds, why content is withheld, and why a chain
check fails.

Plain `str` enums, so a member equals the string stored in the database and written in an export;
`graph/types/enums.py` shows the same members to GraphQL under the schema's names.
"""

from __future__ import annotations

from enum import Enum


class TaskStatus(str, Enum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"
    STOPPED = "STOPPED"


ENDED_STATUSES = frozenset({TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.STOPPED})


class LineKind(str, Enum):
    STARTED = "STARTED"
    MODEL_CALL = "MODEL_CALL"
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    ASKED_FOR_HELP = "ASKED_FOR_HELP"
    SENT_BACK = "SENT_BACK"
    ENDED = "ENDED"
    ERASED = "ERASED"


class WithheldReason(str, Enum):
    """Why a turn's content is missing."""

    METADATA_ONLY = "METADATA_ONLY"
    RECORDING_OFF = "RECORDING_OFF"
    REDACTED = "REDACTED"
    ERASED = "ERASED"


class VerifyReason(str, Enum):
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
