// The Vercel AI SDK's generateText with its mock model (ai/test) and two tools, traced by experimental_telemetry and
// exported by the OpenTelemetry SDK's OTLP/HTTP (protobuf) exporter: node generate.mjs ENDPOINT KIT_TOKEN.
// A connection to any host but this one ends the process with exit code 3.
import net from "node:net";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const given = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof given === "object" ? given : { port: given, host: args[1] };
  if (typeof options.path !== "string" && !LOOPBACK.has(options.host ?? "localhost")) {
    process.stderr.write(`the run may reach only this host, not ${options.host}\n`);
    process.exit(3);
  }
  return connect.apply(this, args);
};

const [endpoint, token] = process.argv.slice(2);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new OTLPTraceExporter({ url: endpoint, headers: { Authorization: `Bearer ${token}` } });
const provider = new TracerProvider({
  resource: resourceFromAttributes({ "service.name": "workshop" }),
  spanProcessors: [new BatchSpanProcessor({ exporter })],
});

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const steps = [
  {
    content: [
      { type: "tool-call", toolCallId: "call-1", toolName: "labourHours", input: JSON.stringify({ job: "rear brake" }) },
      { type: "tool-call", toolCallId: "call-2", toolName: "partsFor", input: JSON.stringify({ fault: "rear brake" }) },
    ],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: usage(61, 17),
    warnings: [],
  },
  {
    content: [{ type: "text", text: "One hour of labour, brake pads and a cable." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(94, 12),
    warnings: [],
  },
];
const model = new MockLanguageModelV3({ provider: "mock", modelId: "estimator-mock", doGenerate: steps });

const answer = await generateText({
  model,
  system: "You estimate bicycle repairs.",
  prompt: "What does a rear brake repair take?",
  tools: {
    labourHours: tool({
      description: "The hours a job takes.",
      inputSchema: z.object({ job: z.string() }),
      execute: async ({ job }) => ({ job, hours: 1 }),
    }),
    partsFor: tool({
      description: "The parts a repair needs.",
      inputSchema: z.object({ fault: z.string() }),
      execute: async () => ["brake pads", "cable"],
    }),
  },
  stopWhen: stepCountIs(3),
  experimental_telemetry: {
    isEnabled: true, functionId: "estimate-repair", tracer: provider.getTracer("workshop"),
    metadata: { agent: "Estimator" },
  },
});
await provider.forceFlush();
await provider.shutdown();
process.stdout.write(JSON.stringify({ text: answer.text, steps: answer.steps.length }) + "\n");
