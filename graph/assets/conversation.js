// A model call's content as the conversation it is: the system prompt, each message by role, and the response's
// text and tool requests, read from the kit's shape, the GenAI conventions' parts (`gen_ai.input.messages`,
// `gen_ai.output.messages`), OpenInference's messages and OpenAI's choices alike; the raw JSON one click away.
// A tool's arguments and result read as a small table when they are an object.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const json = (value) => JSON.stringify(value, null, 2);
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

function parsed(value) {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function toolCall(call) {
  const fn = call.function || call;
  return { type: "call", name: fn.name || call.name || "a tool", args: parsed(fn.arguments ?? call.input ?? call.args) };
}

// One piece of a message: text, a tool request, a tool's answer, or anything else as JSON.
function part(p) {
  if (typeof p === "string") return [{ type: "text", text: p }];
  if (!isObject(p)) return [{ type: "other", value: p }];
  const type = p.type || (p.text !== undefined ? "text" : p.content !== undefined ? "text" : "other");
  if (type === "text" || type === "input_text" || type === "output_text") return [{ type: "text", text: String(p.text ?? p.content ?? "") }];
  if (type === "tool_call" || type === "tool_use" || type === "function_call") return [toolCall(p)];
  if (type === "tool_call_response" || type === "tool_result") return [{ type: "answer", value: parsed(p.response ?? p.content ?? p.output) }];
  if (type === "reasoning" || type === "thinking") return [{ type: "text", text: String(p.content ?? p.thinking ?? p.text ?? "") }];
  return [{ type: "other", value: p }];
}

function message(m, role) {
  if (!isObject(m)) return { role, parts: part(m) };
  const inner = m.message && isObject(m.message) ? m.message : m;
  const parts = [];
  const content = inner.parts ?? inner.content;
  if (Array.isArray(content)) content.forEach((p) => parts.push(...part(p)));
  else if (content !== undefined && content !== null) parts.push(...part(isObject(content) ? content : String(content)));
  if (inner.text !== undefined && inner.parts === undefined && inner.content === undefined) parts.push({ type: "text", text: String(inner.text) });
  for (const call of inner.tool_calls || inner.toolCalls || []) parts.push(toolCall(call));
  const known = ["role", "parts", "content", "text", "tool_calls", "toolCalls", "finish_reason", "finishReason",
    "index", "message", "name", "tool_call_id", "id"];
  if (parts.length === 0 && Object.keys(inner).some((k) => !known.includes(k))) parts.push({ type: "other", value: inner });
  return { role: inner.role || role, parts };
}

function messages(value, role) {
  const found = parsed(value);
  if (found === null || found === undefined) return [];
  if (isObject(found) && Array.isArray(found.messages)) return messages(found.messages, role);
  if (isObject(found) && Array.isArray(found.choices)) return messages(found.choices, role);
  return (Array.isArray(found) ? found : [found]).map((m) => message(m, role));
}

function systemParts(value) {
  const found = parsed(value);
  if (found === null || found === undefined || found === "") return [];
  return (Array.isArray(found) ? found : [found]).flatMap(part);
}

// The content read as { system, messages, response }, each a list of { role, parts }; null when it is not a
// model call's content.
export function conversationOf(payload) {
  const content = parsed(payload);
  if (!isObject(content) || !("messages" in content || "response" in content)) return null;
  const system = systemParts(content.systemPrompt);
  const asked = messages(content.messages, "user");
  const heard = messages(content.response, "assistant");
  const split = asked.filter((m) => m.role === "system");
  return {
    system: [...system, ...split.flatMap((m) => m.parts)],
    messages: asked.filter((m) => m.role !== "system"),
    response: heard,
  };
}

const ROLE = { user: "User", assistant: "Assistant", tool: "Tool", system: "System", developer: "Developer", model: "Assistant" };
const said = (role) => ROLE[role] || role;

function textOf(p) {
  if (p.type === "text") return p.text;
  if (p.type === "call") return `asks for ${p.name}`;
  if (p.type === "answer") return `answers ${typeof p.value === "string" ? p.value : JSON.stringify(p.value)}`;
  return JSON.stringify(p.value);
}

// The conversation in one line, for a row of the step list.
export function conversationLine(conversation) {
  const turn = (m) => `${said(m.role)}: ${m.parts.map(textOf).join(" ")}`;
  const asked = conversation.messages.length ? turn(conversation.messages[conversation.messages.length - 1]) : "";
  const heard = conversation.response.map((m) => m.parts.map(textOf).join(" ")).join(" ");
  return [asked, heard && `Reply: ${heard}`].filter(Boolean).join(" → ");
}

export function Fields({ value }) {
  const found = parsed(value);
  if (!isObject(found) || Object.keys(found).length === 0) {
    return html`<pre>${typeof found === "string" ? found : json(found)}</pre>`;
  }
  return html`<table class="fields" data-testid="fields"><tbody>
    ${Object.entries(found).map(([key, v]) => html`<tr><th scope="row">${key}</th>
      <td>${typeof v === "string" ? v : isObject(v) || Array.isArray(v) ? html`<code>${JSON.stringify(v)}</code>` : String(v)}</td></tr>`)}
  </tbody></table>`;
}

function Part({ p }) {
  if (p.type === "text") return html`<p class="said">${p.text}</p>`;
  if (p.type === "call") {
    return html`<div class="asks" data-testid="tool-request"><p>Asks for <strong>${p.name}</strong>${
      p.args === undefined || p.args === null || (isObject(p.args) && !Object.keys(p.args).length) ? "" : " with"}</p>
      ${p.args !== undefined && p.args !== null && !(isObject(p.args) && !Object.keys(p.args).length) && html`<${Fields} value=${p.args} />`}</div>`;
  }
  if (p.type === "answer") return html`<div class="answer"><p>Tool answer</p><${Fields} value=${p.value} /></div>`;
  return html`<pre>${json(p.value)}</pre>`;
}

function Message({ m, testid }) {
  return html`<li class=${`message role-${m.role}`} data-testid=${testid} data-role=${m.role}>
    <span class="role">${said(m.role)}</span>
    <div>${m.parts.length ? m.parts.map((p) => html`<${Part} p=${p} />`) : html`<p class="reason">Nothing said.</p>`}</div>
  </li>`;
}

export function Conversation({ conversation }) {
  return html`<div class="conversation" data-testid="conversation">
    ${conversation.system.length > 0 && html`<section class="system" data-testid="system-prompt"><h4>System prompt</h4>
      ${conversation.system.map((p) => html`<${Part} p=${p} />`)}</section>`}
    <h4>Messages</h4>
    ${conversation.messages.length ? html`<ol class="messages">${conversation.messages.map((m) => html`<${Message} m=${m} testid="message" />`)}</ol>`
      : html`<p class="reason">None recorded.</p>`}
    <h4>Response</h4>
    ${conversation.response.length ? html`<ol class="messages">${conversation.response.map((m) => html`<${Message} m=${m} testid="response" />`)}</ol>`
      : html`<p class="reason">None recorded.</p>`}
  </div>`;
}

// The content drawn for a person, with its raw JSON a click away.
export function Readable({ payload, kind }) {
  const [raw, setRaw] = useState(false);
  const conversation = kind === "MODEL_CALL" ? conversationOf(payload) : null;
  const value = parsed(payload);
  const drawn = conversation ? html`<${Conversation} conversation=${conversation} />`
    : isObject(value) ? html`<${Fields} value=${value} />` : null;
  if (!drawn) return html`<pre data-testid="step-content">${typeof value === "string" ? value : json(value)}</pre>`;
  return html`<div class="readable" data-testid="step-content">
    <p><button type="button" aria-pressed=${raw} onClick=${() => setRaw(!raw)}>${raw ? "Show it readable" : "Show the raw JSON"}</button></p>
    ${raw ? html`<pre data-testid="raw-json">${json(value)}</pre>` : drawn}
  </div>`;
}
