"""The permission classes guarded resolver fields carry: one per field group, made from the table."""

from __future__ import annotations

from typing import Any, ClassVar

from strawberry.permission import BasePermission

from permissions.access import GUARDED_GROUPS, Group, may_read


class ReadsGroup(BasePermission):
    """The object was built for a caller who reads `group` on it (its `groups`)."""

    group: ClassVar[Group]

    def has_permission(self, source: Any, info: Any, **kwargs: Any) -> bool:
        return may_read(source.groups, self.group)


class ReadsTranscript(BasePermission):
    """Per agent: the caller reads the task and holds a transcriptReaders role of every agent in its subtree."""

    async def has_permission(self, source: Any, info: Any, **kwargs: Any) -> bool:
        if not source.groups:
            return False
        below = await info.context.loaders.subtree.load(source.row.path)
        return await info.context.access.reads_transcripts_of([source.row.agent, *(t.agent for t in below)])


def _reads(group: Group) -> type[BasePermission]:
    name = f"Reads{group.name.title()}"
    return type(name, (ReadsGroup,), {"group": group, "__module__": __name__, "__qualname__": name})


PERMISSIONS: dict[Group, type[BasePermission]] = {
    **{group: _reads(group) for group in GUARDED_GROUPS if group is not Group.TRANSCRIPT},
    Group.TRANSCRIPT: ReadsTranscript,
}
