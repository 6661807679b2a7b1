// Every read the inspector makes, in one place. A node's children come as a list of ids (childIds, or taskPage's
// childIds), then a page of them at a time by id (nodes); where the server pages children (children(first, after),
// childCount) those become one read of a page. Steps are read whole; with record(first, after) and
// trace(first, after) stepsOf can read them a page at a time.
import { graphql } from "./api.js";

export const PAGE = 50;

const NODE = `id agent skill status about startedAt endedAt limitMicros`;
const CHILD = `${NODE} children { id }`;
const child = ({ children, ...task }) => ({ ...task, hasChildren: children.length > 0 });

export async function me() {
  return (await graphql(`{ me { id name tenant roles } }`)).me;
}

export async function filterFields() {
  const data = await graphql(`{ __type(name: "TaskFilter") { inputFields { name } } }`);
  return new Set(((data.__type && data.__type.inputFields) || []).map((f) => f.name));
}

export async function taskList(filter, after) {
  const data = await graphql(
    `query($filter: TaskFilter, $first: Int!, $after: String) {
      tasks(filter: $filter, first: $first, after: $after) {
        edges { node { ${NODE} cost { ownMicros allInMicros } requester { id name } } }
        pageInfo { hasNextPage endCursor }
      }
    }`,
    { filter, first: PAGE, after: after || null },
  );
  return data.tasks;
}

export async function taskPage(id) {
  const data = await graphql(
    `query($id: ID!) {
      task(id: $id) {
        ${NODE} trigger outcome session cause skillVersion chainLength
        requester { id name } actor { id name }
        lineage { id agent skill about }
        children { id }
      }
    }`,
    { id },
  );
  return data.task && { ...data.task, childIds: data.task.children.map((c) => c.id) };
}

export async function childIds(id) {
  const data = await graphql(`query($id: ID!) { task(id: $id) { children { id } } }`, { id });
  return data.task ? data.task.children.map((c) => c.id) : [];
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

// One page of tree nodes.
export async function nodes(ids) {
  return (await byId(ids, CHILD)).map(child);
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

// The task's own steps (trace), or the steps of its whole tree (record).
export async function stepsOf(id, whole) {
  const data = await graphql(
    `query($id: ID!) {
      task(id: $id) {
        steps: ${whole ? "record" : "trace"} {
          seq kind at summary payload contentAccess erasedAt contentErasedAt
          model tool costMicros durationMs isError hash task { id agent skill }
        }
      }
    }`,
    { id },
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
