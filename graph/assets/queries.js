// Every read the inspector makes, in one place. A node's children, and the steps, are read a page at a time
// (children(first, after), record / trace(first, after)), against childCount and chainLength.
import { graphql } from "./api.js";

export const PAGE = 50;
export const STEP_PAGE = 100;
export const ORDERS = ["STARTED_AT_DESC", "STARTED_AT_ASC", "ENDED_AT_DESC"];

const NODE = `id agent skill status about startedAt endedAt limitMicros readableGroups`;
const UNPRICED_READ = 500;
const CHILD = `${NODE} childCount`;
const child = (task) => ({ ...task, hasChildren: task.childCount > 0 });

export async function me() {
  return (await graphql(`{ me { id name tenant roles holdsRecords } }`)).me;
}

export async function filterFields() {
  const data = await graphql(`{ __type(name: "TaskFilter") { inputFields { name } } }`);
  return new Set(((data.__type && data.__type.inputFields) || []).map((f) => f.name));
}

export async function agents() {
  return (await graphql(`{ agents { name transcriptReaders } }`)).agents;
}

export async function taskList(filter, after, orderBy) {
  const data = await graphql(
    `query($filter: TaskFilter, $first: Int!, $after: String, $orderBy: TaskOrder!) {
      tasks(filter: $filter, first: $first, after: $after, orderBy: $orderBy) {
        totalCount
        edges { node { ${NODE} session cost { ownMicros allInMicros } requester { id name } } }
        pageInfo { hasNextPage endCursor }
      }
    }`,
    { filter, first: PAGE, after: after || null, orderBy: ORDERS.includes(orderBy) ? orderBy : ORDERS[0] },
  );
  return data.tasks;
}

export async function taskPage(id) {
  const data = await graphql(
    `query($id: ID!, $first: Int!, $calls: Int!) {
      task(id: $id) {
        ${NODE} trigger outcome session cause skillVersion chainLength
        requester { id name } actor { id name } stopAsked { by { id name } reason at }
        lineage { id agent skill about requester { id name } }
        childCount children(first: $first) { ${CHILD} }
        calls(first: $calls) { costSource }
      }
    }`,
    { id, first: PAGE, calls: UNPRICED_READ },
  );
  if (!data.task) return null;
  const { calls, ...task } = data.task;
  const unpricedCalls = calls.filter((c) => c.costSource === "UNPRICED").length;
  return { ...task, unpricedCalls, children: task.children.map(child) };
}

// The page of a task's children after the child `after` (from the first without it).
export async function childPage(id, after) {
  const data = await graphql(
    `query($id: ID!, $first: Int!, $after: ID) { task(id: $id) { children(first: $first, after: $after) { ${CHILD} } } }`,
    { id, first: PAGE, after: after || null },
  );
  return data.task ? data.task.children.map(child) : [];
}

// Tasks by id, a few aliased task(id:) reads per request (the alias limit is 50).
async function byId(ids, fields) {
  const chunks = [];
  for (let i = 0; i < ids.length; i += 25) chunks.push(ids.slice(i, i + 25));
  const pages = await Promise.all(chunks.map(async (chunk) => {
    const data = await graphql(
      `query(${chunk.map((_, i) => `$i${i}: ID!`).join(", ")}) {
        ${chunk.map((_, i) => `n${i}: task(id: $i${i}) { ${fields} }`).join("\n")}
      }`,
      Object.fromEntries(chunk.map((id, i) => [`i${i}`, id])),
    );
    return chunk.map((_, i) => data[`n${i}`]).filter(Boolean);
  }));
  return pages.flat();
}

// Costs are summed over each task's whole subtree, the slowest figure of a large tree: they are read after
// the tree is on the screen, as a map from task id to cost.
export async function costs(ids) {
  const found = await byId(ids, "id cost { ownMicros allInMicros }");
  return Object.fromEntries(found.map((t) => [t.id, t.cost]));
}

export async function verifyOf(id) {
  const data = await graphql(`query($id: ID!) { verifyTrace(task: $id) { intact lines brokenAt problem erased } }`, { id });
  return data.verifyTrace;
}

// A page of the task's own steps (trace), or of the steps of its whole tree (record), those after line `after`.
export async function stepsOf(id, whole, after) {
  const data = await graphql(
    `query($id: ID!, $first: Int!, $after: Int) {
      task(id: $id) {
        steps: ${whole ? "record" : "trace"}(first: $first, after: $after) {
          seq kind at summary payload contentAccess withheldReason erasedAt contentErasedAt
          model tool costMicros durationMs isError hash task { id agent skill } call { costSource }
        }
      }
    }`,
    { id, first: STEP_PAGE, after: after ?? null },
  );
  return data.task ? data.task.steps : [];
}

export async function transcriptOf(id) {
  const data = await graphql(
    `query($id: ID!) {
      task(id: $id) {
        transcript {
          turn agent model at contentWithheld withheldReason systemPrompt messages response
          task { id }
          tools { name toolCallId isError durationMs sequence input output }
        }
      }
    }`,
    { id },
  );
  return data.task ? data.task.transcript : [];
}

export async function sessionOf(id) {
  const data = await graphql(
    `query($id: String!) {
      session(id: $id) {
        id taskCount totalCostMicros inputTokens outputTokens modelCalls failedTasks startedAt endedAt moreTurns
        tasks { ${NODE} outcome requester { id name } cost { allInMicros } }
      }
    }`,
    { id },
  );
  return data.session;
}

export async function usageOf(from, to, bucket, groupBy) {
  const data = await graphql(
    `query($from: DateTime!, $to: DateTime!, $bucket: UsageBucket!, $groupBy: UsageGroup!) {
      usage(from: $from, to: $to, bucket: $bucket, groupBy: $groupBy) {
        at key costMicros inputTokens outputTokens calls failures
      }
    }`,
    { from: from.toISOString(), to: to.toISOString(), bucket, groupBy },
  );
  return data.usage;
}

const WATERFALL_FIRST = 1000;
const WATERFALL_PAGE = 5000;
const WATERFALL_LINES = 20000;
const BAR = "id agent skill depth status startedAt endedAt";

// The tree's tasks for the waterfall: the root, and the first 5,000 under it, each with its parent.
export async function waterfallTasks(id) {
  const data = await graphql(
    `query($id: ID!, $first: Int!) { task(id: $id) { ${BAR} subtree(first: $first) { ${BAR} parent { id } } } }`,
    { id, first: WATERFALL_PAGE },
  );
  if (!data.task) return null;
  const { subtree, ...task } = data.task;
  return { task, tasks: subtree };
}

// A page of the tree's record for the waterfall: up to `first` lines after line `after`.
export async function waterfallLines(id, after, first = WATERFALL_PAGE) {
  const found = await graphql(
    `query($id: ID!, $first: Int!, $after: Int) { task(id: $id) { record(first: $first, after: $after) {
      seq kind at model tool toolCallId durationMs inputTokens outputTokens costMicros isError task { id } } } }`,
    { id, first, after: after ?? null },
  );
  const lines = found.task ? found.task.record : [];
  return { lines, full: lines.length === first };
}

const begun = new Map();
const waterfallStart = (id) => Promise.all([waterfallTasks(id), waterfallLines(id, null, WATERFALL_FIRST)]);

// Begins the waterfall's first reads as a task's page opens, before its receipt is read; the next `waterfallOf`
// of that task takes them.
export function beginWaterfall(id) {
  const start = waterfallStart(id);
  start.catch(() => {});
  begun.set(id, start);
}

// The tree's tasks and the first 20,000 lines of its record, for the waterfall: the tasks and a first short page
// read side by side and handed to `onPage` to be drawn, then pages of 5,000, each handed on as it comes.
export async function waterfallOf(id, onPage = () => {}) {
  const start = begun.get(id) || waterfallStart(id);
  begun.delete(id);
  const [tree, first] = await start;
  if (!tree) return null;
  const lines = [...first.lines];
  let more = first.full;
  for (;;) {
    const left = WATERFALL_LINES - lines.length;
    onPage({ ...tree, lines: [...lines], more, reading: more && left > 0 });
    if (!more || left <= 0) break;
    const read = await waterfallLines(id, lines[lines.length - 1].seq, Math.min(WATERFALL_PAGE, left));
    lines.push(...read.lines);
    more = read.full;
  }
  return { ...tree, lines, more };
}

// One side of a comparison: the task's figures, its own first 500 steps, and its verify badge.
export async function compareSide(id) {
  const data = await graphql(
    `query($id: ID!) {
      task(id: $id) {
        id agent skill status startedAt endedAt cost { allInMicros allInInputTokens allInOutputTokens }
        trace(first: 500) { seq kind model tool inputTokens outputTokens costMicros durationMs isError }
      }
      verifyTrace(task: $id) { intact lines brokenAt }
    }`,
    { id },
  );
  if (!data.task) return null;
  const { trace, ...task } = data.task;
  return { task, lines: trace, check: data.verifyTrace };
}

// The id of the run of the same agent and skill that started last before this one, or null.
export async function runBefore(task) {
  const data = await graphql(
    `query($filter: TaskFilter) { tasks(filter: $filter, first: 1) { edges { node { id } } } }`,
    { filter: { agent: task.agent, skill: task.skill, startedBefore: task.startedAt } },
  );
  return data.tasks.edges.length ? data.tasks.edges[0].node.id : null;
}

const RUNNING_TASKS = 50;
const RUNNING_TRACES = 20;

// The running tasks the viewer may see (sub-tasks too, each with its parent), newest first, with what each has
// spent so far.
export async function runningTasks() {
  const data = await graphql(
    `query($first: Int!) {
      tasks(filter: { status: RUNNING }, first: $first, orderBy: STARTED_AT_DESC) {
        totalCount
        edges { node { ${NODE} depth modelCalls toolCalls parent { id agent skill }
          cost { allInMicros allInInputTokens allInOutputTokens } } }
      }
    }`,
    { first: RUNNING_TASKS },
  );
  return { tasks: data.tasks.edges.map((e) => e.node), total: data.tasks.totalCount };
}

// The traces whose spans wait to be placed: provisional, not in the record; none for a viewer the tenant's policies
// do not let read them.
export async function waitingTraces() {
  const data = await graphql(
    `query($first: Int!) {
      runningTraces(first: $first) {
        totalCount
        edges { node { traceId firstSeenAt lastSeenAt spanCount modelCalls toolCalls inputTokens outputTokens
          spans(first: 200) { kind agent name } } }
      }
    }`,
    { first: RUNNING_TRACES },
  );
  return { traces: data.runningTraces.edges.map((e) => e.node), total: data.runningTraces.totalCount };
}
