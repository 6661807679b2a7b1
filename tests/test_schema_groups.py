"""The schema guards itself: every field of the guarded types declares its group, and a denial can always be null."""

from __future__ import annotations

import pytest
from strawberry.permission import PermissionExtension
from strawberry.types.base import StrawberryList, StrawberryOptional

from graph.api.guard import group_of
from graph.api.schema import build_schema
from permissions.classes import PERMISSIONS
from permissions.table import EVERY_READER_READS, Group, describe

GUARDED_TYPES = ["AgentTask", "TraceEvent", "AgentHelp", "AgentLlmTurn", "AgentToolCall"]

SCHEMA = build_schema()


def fields_of(type_name: str) -> dict:
    """The published fields of a type, each as the strawberry field it was declared as."""
    published = SCHEMA._schema.type_map[type_name].fields
    return {name: f.extensions["strawberry-definition"] for name, f in published.items()}


def permissions_of(field) -> list[type]:
    return [type(p) for e in field.extensions if isinstance(e, PermissionExtension) for p in e.permissions]


def silent(field) -> bool:
    return all(e.fail_silently for e in field.extensions if isinstance(e, PermissionExtension))


@pytest.mark.parametrize("type_name", GUARDED_TYPES)
def test_every_field_declares_its_group(type_name):
    ungrouped = [name for name, field in fields_of(type_name).items() if not isinstance(group_of(field), Group)]
    assert ungrouped == [], f"{type_name} fields without a field group: {ungrouped}"


@pytest.mark.parametrize("type_name", GUARDED_TYPES)
def test_every_field_says_in_the_schema_who_reads_it(type_name):
    silent_about_it = [
        name for name, field in fields_of(type_name).items() if describe(group_of(field)) not in (field.description or "")
    ]
    assert silent_about_it == []


@pytest.mark.parametrize("type_name", GUARDED_TYPES)
def test_every_field_not_every_reader_reads_is_nullable(type_name):
    not_nullable = [
        name
        for name, field in fields_of(type_name).items()
        if group_of(field) not in EVERY_READER_READS
        and not isinstance(field.type, StrawberryOptional)
        and not (field.base_resolver is not None and isinstance(field.type, StrawberryList))
    ]
    assert not_nullable == [], f"{type_name}: a denial of these would null the object: {not_nullable}"


@pytest.mark.parametrize("type_name", GUARDED_TYPES)
def test_every_resolver_not_every_reader_reads_runs_behind_its_groups_permission(type_name):
    unchecked = [
        name
        for name, field in fields_of(type_name).items()
        if field.base_resolver is not None
        and group_of(field) not in EVERY_READER_READS
        and (permissions_of(field) != [PERMISSIONS[group_of(field)]] or not silent(field))
    ]
    assert unchecked == []


def test_the_transcript_is_guarded_per_agent_not_by_the_task_table():
    transcript = fields_of("AgentTask")["transcript"]
    assert group_of(transcript) is Group.TRANSCRIPT
    assert [p.__name__ for p in permissions_of(transcript)] == ["ReadsTranscript"]


def test_figures_are_read_by_every_reader_so_an_object_a_caller_sees_always_has_them():
    assert EVERY_READER_READS == {Group.FIGURES}
