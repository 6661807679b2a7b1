"""The kit's writes: the only way receipts, lines and meter rows come to exist."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from strawberry.utils.str_converters import to_camel_case

from models import AgentHelp, AgentTask, RegisteredAgent, TenantPolicies, TraceEvent, settings
from models.ledger import AGENT as LEDGER_AGENT
from models.rows.policies import CAPABILITIES
from models.rows.task import MAX_DEPTH
from permissions.principal import Principal
from resolvers.write import checks, lines, made_task, sentences
from resolvers.control import stop_asks
from models.errors import BadInput, Conflict, NotFound
from models.record.vocabulary import LineKind, TaskStatus
from resolvers.events.notices import ENDED_EVENTS, publish_task
from resolvers.write.made_task import new_task
from resolvers.read.rows import LineRow
from resolvers.write.withheld import withheld_reason
from resolvers.answer.ledger import record_change
from resolvers.webhooks import outbox
from resolvers.webhooks.wanted import Hooks, hooks_column, hooks_of
from models.db import placeholders
from resolvers.write.append import append, append_many, insert_rows, kit_unit, lock_tree, now, running_task, task_of

TASK_STATUSES = {TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.STOPPED}


AGENT_OF = 'SELECT "logging", {hooks} AS "hooks" FROM "agent" WHERE "tenant" = $2 AND "name" = $3'


async def _agent(tenant: str, name: str, conn: Any) -> tuple[str, Hooks]:
    """The agent's logging mode, and the tenant's webhooks read in the same statement."""
    sql = AGENT_OF.format(hooks=hooks_column(conn.capabilities.dialect, 1))
    rows = await conn.execute_query_dict(placeholders(conn, sql), [tenant, tenant, name])
    if not rows:
        raise BadInput(f"agent: {name!r} is not registered; call registerAgent first.", field="agent")
    return rows[0]["logging"], hooks_of(rows[0]["hooks"])


async def _reload_task(tenant: str, rid: str) -> AgentTask:
    return await AgentTask.get(id=rid, tenant=tenant)


async def _reload_help(tenant: str, rid: str) -> AgentHelp:
    return await AgentHelp.get(id=rid, tenant=tenant)


def _agent_said(agent: RegisteredAgent) -> dict[str, Any]:
    """What the ledger records of an agent: whose transcripts it lets be read, what it logs, its roles, its purpose."""
    return {"agent": agent.name, "transcriptReaders": list(agent.transcript_readers or []), "logging": agent.logging,
            "roles": list(agent.roles or []), "purpose": agent.purpose}


def _policies_said(policies: TenantPolicies) -> dict[str, Any]:
    """What the ledger records of the policies: every capability's roles, who holds records, what is kept and why."""
    said: dict[str, Any] = {to_camel_case(cap): list(getattr(policies, cap) or []) for cap in CAPABILITIES}
    said.update(holdsRecords=list(policies.holds_records or []), retainDays=policies.retain_days,
                retentionBasis=policies.retention_basis)
    return said


async def register_agent(principal: Principal | None, data: dict[str, Any]) -> RegisteredAgent:
    async with kit_unit(principal, "registerAgent", data) as unit:
        if unit.first is None:
            agent = await _register(unit.writer, data, unit.conn)
            unit.answered(agent.name)
    if unit.first is not None:
        return await RegisteredAgent.get(tenant=unit.writer.tenant, name=unit.first)
    return agent


async def _register(kit: Principal, data: dict[str, Any], conn: Any) -> RegisteredAgent:
    fields = {
        "purpose": checks.text("purpose", data.get("purpose")),
        "roles": checks.names("roles", data.get("roles")) or [],
        "transcript_readers": checks.names("transcriptReaders", data.get("transcript_readers")) or [],
        "logging": data.get("logging") or "FULL",
    }
    name = checks.name("name", data.get("name"), required=True)
    if name == LEDGER_AGENT:
        raise BadInput(f"name: {LEDGER_AGENT!r} is the server's own name, the agent of the tenant's ledger; "
                       "choose another.", field="name")
    agent = await RegisteredAgent.filter(tenant=kit.tenant, name=name).using_db(conn).select_for_update().first()
    if agent is None:
        agent, made = await RegisteredAgent.get_or_create(defaults=fields, tenant=kit.tenant, name=name,
                                                          using_db=conn)
        if made:
            await record_change(conn, kit.tenant, kit, "registerAgent", _agent_said(agent),
                                f"registered the agent {name}")
            return agent
    before = _agent_said(agent)
    await RegisteredAgent.filter(id=agent.id, tenant=kit.tenant).using_db(conn).update(**fields)
    agent.update_from_dict(fields)
    if _agent_said(agent) != before:
        await record_change(conn, kit.tenant, kit, "registerAgent", _agent_said(agent),
                            f"changed the agent {name}")
    return agent


async def define_policies(principal: Principal | None, data: dict[str, Any]) -> TenantPolicies:
    async with kit_unit(principal, "definePolicies", data) as unit:
        if unit.first is None:
            policies = await _define_policies(unit.writer, data, unit.conn)
            unit.answered(policies.tenant)
    if unit.first is not None:
        return await TenantPolicies.get(tenant=unit.writer.tenant)
    return policies

async def _define_policies(kit: Principal, data: dict[str, Any], conn: Any) -> TenantPolicies:
    given = {cap: checks.names(to_camel_case(cap), data.get(cap)) for cap in CAPABILITIES}
    policies = await TenantPolicies.filter(tenant=kit.tenant).using_db(conn).select_for_update().first()
    before = _policies_said(policies) if policies is not None else None
    if policies is None:
        policies = TenantPolicies(tenant=kit.tenant)
    for cap, roles in given.items():
        if roles is not None:
            setattr(policies, cap, roles)
    holders = checks.names("holdsRecords", data.get("holds_records"))
    if holders is not None:
        policies.holds_records = holders
    days = checks.count("retainDays", data.get("retain_days"))
    basis = checks.text("retentionBasis", data.get("retention_basis"))
    if days is not None:
        policies.retain_days = checks.retain_days(days)
        policies.retention_basis = checks.retention_basis(policies.retain_days, basis, settings.retention_floor_days())
    elif basis is not None:
        policies.retention_basis = basis
    await policies.save(using_db=conn)
    if (after := _policies_said(policies)) != before:
        await record_change(conn, kit.tenant, kit, "definePolicies", after, "defined the policies")
    return policies


async def start_task(principal: Principal | None, data: dict[str, Any]) -> AgentTask:
    async with kit_unit(principal, "startTask", data) as unit:
        if unit.first is None:
            task = await _start(unit.writer, data, unit.conn)
            unit.answered(str(task.id))
    if unit.first is not None:
        return await _reload_task(unit.writer.tenant, unit.first)
    await publish_task("AgentTaskStarted", task)
    return task


async def _start(kit: Principal, data: dict[str, Any], conn: Any) -> AgentTask:
    agent_name = checks.name("agent", data.get("agent"), required=True)
    logging, hooks = await _agent(kit.tenant, agent_name, conn)
    requester = checks.principal("requester", data.get("requester"))
    actor = checks.principal("actor", data.get("actor"), required=True)
    instructions = checks.text("instructionsSent", data.get("instructions_sent"), checks.TEXT_CHARS)
    given = checks.text("given", data.get("given"), checks.TEXT_CHARS)
    skill = checks.name("skill", data.get("skill"), required=True)
    described = {
        "skill_version": checks.name("skillVersion", data.get("skill_version")),
        "about": checks.text("about", data.get("about")),
        "trigger": checks.text("trigger", data.get("trigger")),
        "instruction_set": checks.count("instructionSet", data.get("instruction_set")),
        "limit_micros": checks.count("limitMicros", data.get("limit_micros")),
        "workflow_run": checks.name("workflowRun", data.get("workflow_run")),
        "run_step": checks.name("runStep", data.get("run_step")),
        "entity_type": checks.name("entityType", data.get("entity_type")),
        "entity_id": checks.name("entityId", data.get("entity_id")),
    }
    session = checks.name("session", data.get("session"))
    summary = checks.text("summary", data.get("summary"))
    parent, root, siblings = None, None, 0
    if data.get("parent") is not None:
        parent, root = await _open_parent(kit.tenant, data["parent"], conn)
        siblings = await children_of(kit.tenant, parent.id, conn)
    made, started = new_task(
        kit.tenant, agent_name, skill, actor, now(), withheld_reason(logging), parent, siblings,
        requester=requester, summary=summary, cause=data.get("cause") or "REQUEST", given=given,
        instructions_sent=instructions, session=session, **described,
    )
    await insert_rows(conn, "agent_task", made_task.COLUMNS, [made_task.stored_row(made)])
    await append_many(root or made, [made_task.started_step(made, started)], conn)
    task = AgentTask(**{column: getattr(made, column) for column in made_task.COLUMNS})
    await outbox.owe(conn, kit.tenant, hooks, [outbox.task_event("AgentTaskStarted", task)])
    return task


LAST_CHILD = 'SELECT MAX("sequence") AS "n" FROM "agent_task" WHERE "tenant"=$1 AND "parent_id"=$2'


async def children_of(tenant: str, parent_id: uuid.UUID, conn: Any) -> int:
    """How many children a task has, read under its tree's lock: its last child's `sequence`, at the end of their
    index, as a pass of spans reads it (resolvers/otlp/under.py), rather than a count through all of them."""
    rows = await conn.execute_query_dict(placeholders(conn, LAST_CHILD), [tenant, str(parent_id)])
    return rows[0]["n"] or 0


async def _open_parent(tenant: str, parent_id: str, conn: Any) -> tuple[AgentTask, AgentTask]:
    """The parent a sub-task starts under, re-read under its tree's lock, and the locked root."""
    parent = await task_of(tenant, "parent", parent_id, conn)
    root = await lock_tree(parent.root_id, tenant, conn)
    parent = root if parent.id == root.id else await AgentTask.filter(id=parent.id, tenant=tenant).using_db(conn).get()
    if parent.status != TaskStatus.RUNNING:
        raise Conflict(f"parent: task {parent.id} has ended ({parent.status}); no sub-task starts under it.",
                       field="parent")
    stop_asks.heard(root, parent)
    if parent.depth >= MAX_DEPTH:
        raise BadInput(f"parent: task {parent.id} is {parent.depth} levels below its root; sub-tasks nest at "
                       f"most {MAX_DEPTH} levels deep.", field="parent")
    return parent, root


async def _one_line(principal: Principal | None, operation: str, data: dict[str, Any], drafter: Callable) -> LineRow:
    recorded = await lines.record(principal, operation, data, lambda: [drafter(data)])
    return (await lines.lines_of(recorded))[0]


async def record_model_call(principal: Principal | None, data: dict[str, Any]) -> LineRow:
    return await _one_line(principal, "recordModelCall", data, lines.model_call)


async def record_tool_call(principal: Principal | None, data: dict[str, Any]) -> LineRow:
    return await _one_line(principal, "recordToolCall", data, lines.tool_call)


async def record_tool_result(principal: Principal | None, data: dict[str, Any]) -> LineRow:
    return await _one_line(principal, "recordToolResult", data, lines.tool_result)


async def ask_for_help(principal: Principal | None, data: dict[str, Any]) -> AgentHelp:
    async with kit_unit(principal, "askForHelp", data) as unit:
        if unit.first is None:
            help = await _ask(unit.writer, data, unit.conn)
            unit.answered(str(help.id))
    if unit.first is not None:
        return await _reload_help(unit.writer.tenant, unit.first)
    return help


async def _ask(kit: Principal, data: dict[str, Any], conn: Any) -> AgentHelp:
    question = checks.text("question", data.get("question"), checks.TEXT_CHARS, required=True)
    asked_of = checks.principal("askedOf", data.get("asked_of"), required=True)
    help = AgentHelp(
        id=uuid.uuid4(), tenant=kit.tenant, asked_of_id=asked_of["id"], asked_of_name=asked_of["name"],
        asked_at=now(),
    )
    if data.get("task") is not None:
        running = await running_task(kit.tenant, "task", data["task"], conn)
        task, root = running.task, running.root
        help.task_id, help.root_id = task.id, root.id
        help.withheld = withheld_reason(running.logging)
        help.question = None if help.withheld else question
        await help.save(using_db=conn, force_create=True)
        line = TraceEvent(
            kind=LineKind.ASKED_FOR_HELP, task_id=task.id, at=help.asked_at,
            summary=sentences.asked_for_help(asked_of), payload=help.question, withheld=help.withheld,
        )
        await append(root, line, conn)
    else:
        help.withheld = withheld_reason(None)
        help.question = None if help.withheld else question
        await help.save(using_db=conn, force_create=True)
    return help


async def send_back(principal: Principal | None, data: dict[str, Any]) -> AgentHelp:
    async with kit_unit(principal, "sendBack", data) as unit:
        if unit.first is None:
            help = await _send_back(unit.writer, data, unit.conn)
            unit.answered(str(help.id))
    if unit.first is not None:
        return await _reload_help(unit.writer.tenant, unit.first)
    return help


async def _send_back(kit: Principal, data: dict[str, Any], conn: Any) -> AgentHelp:
    answer = checks.text("answer", data.get("answer"), checks.TEXT_CHARS, required=True)
    by = checks.principal("by", data.get("by"), required=True)
    help_id = checks.uuid_of("help", data.get("help"))
    help = await AgentHelp.filter(id=help_id, tenant=kit.tenant).using_db(conn).first()
    if help is None:
        raise NotFound(f"help: no help request {help_id}.", field="help")
    root = None
    if help.task_id is not None:
        root = (await running_task(kit.tenant, "help", str(help.task_id), conn)).root
    help = await AgentHelp.filter(id=help_id, tenant=kit.tenant).using_db(conn).select_for_update().get()
    if help.erased_at is not None:
        raise Conflict(f"help: help request {help_id} was erased; it takes no answer.", field="help")
    if help.answered_at is not None:
        raise Conflict(f"help: help request {help_id} was already answered.", field="help")
    help.answer = None if help.withheld else answer
    help.answered_by_id, help.answered_by_name, help.answered_at = by["id"], by["name"], now()
    await AgentHelp.filter(id=help.id, tenant=kit.tenant).using_db(conn).update(
        answer=help.answer, answered_by_id=help.answered_by_id, answered_by_name=help.answered_by_name,
        answered_at=help.answered_at,
    )
    if root is not None:
        line = TraceEvent(
            kind=LineKind.SENT_BACK, task_id=help.task_id, at=help.answered_at,
            summary=sentences.sent_back(by), payload=help.answer, withheld=help.withheld,
        )
        await append(root, line, conn)
    return help


async def end_task(principal: Principal | None, data: dict[str, Any]) -> AgentTask:
    async with kit_unit(principal, "endTask", data) as unit:
        if unit.first is None:
            task = await _end(unit.writer, data, unit.conn)
            unit.answered(str(task.id))
    if unit.first is not None:
        return await _reload_task(unit.writer.tenant, unit.first)
    await publish_task(ENDED_EVENTS[task.status], task)
    return task


async def _end(kit: Principal, data: dict[str, Any], conn: Any) -> AgentTask:
    status = data.get("status")
    if status not in TASK_STATUSES:
        raise BadInput(f"status: a task ends DONE, FAILED or STOPPED, not {status}.", field="status")
    outcome = checks.text("outcome", data.get("outcome"))
    result = checks.json_text("result", data.get("result"))
    summary = checks.text("summary", data.get("summary"))
    running = await running_task(kit.tenant, "task", data.get("task"), conn)
    task, root = running.task, running.root
    reason = withheld_reason(running.logging)
    task.status, task.outcome, task.ended_at = status, outcome, now()
    task.result = None if reason else result
    await AgentTask.filter(id=task.id, tenant=kit.tenant).using_db(conn).update(
        status=task.status, outcome=task.outcome, ended_at=task.ended_at, result=task.result
    )
    line = TraceEvent(
        kind=LineKind.ENDED, task_id=task.id, at=task.ended_at, summary=summary or sentences.ended(status),
        payload=task.result, withheld=reason,
    )
    await append(root, line, conn)
    if task.id == root.id:
        task.chain_length, task.chain_head = root.chain_length, root.chain_head
    await outbox.owe(conn, kit.tenant, running.hooks, [outbox.task_event(ENDED_EVENTS[status], task)])
    return task

