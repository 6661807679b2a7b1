// Every read the inspector makes, in one place. Children and steps are fetched whole and shown a page at a time;
// where the server pages them (children(first, after), childCount, record(first, after)), only CHILD, child,
// taskPage's children, childrenOf and stepsOf change.
import { graphql } from "./api.js";

export const PAGE = 50;

const NODE = `id agent skill status about startedAt endedAt limitMicros cost { ownMicros allInMicros }`;
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
        edges { node { ${NODE} requester { id name } } }
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
        children { ${CHILD} }
      }
    }`,
    { id },
  );
  return data.task && { ...data.task, children: data.task.children.map(child) };
}

export async function childrenOf(id) {
  const data = await graphql(`query($id: ID!) { task(id: $id) { children { ${CHILD} } } }`, { id });
  return data.task ? data.task.children.map(child) : [];
}

export async function verifyOf(id) {
  const data = await graphql(`query($id: ID!) { verifyTrace(task: $id) { intact lines brokenAt problem erased } }`, { id });
  return data.verifyTrace;
}

export async function stepsOf(id) {
  const data = await graphql(
    `query($id: ID!) {
      task(id: $id) {
        record {
          seq kind at summary payload contentAccess erasedAt contentErasedAt
          model tool costMicros durationMs isError hash task { id agent skill }
        }
      }
    }`,
    { id },
  );
  return data.task ? data.task.record : [];
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
