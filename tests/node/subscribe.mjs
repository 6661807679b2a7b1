// Subscribes to taskEvents through graphql-ws, the reference client Apollo Client and urql use, and prints each
// message it is given as one JSON line: {"connected": true}, {"next": data}, {"closed": code, "reason": ...} or {"error": ...}; exits after `count` events.
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const [url, token, count] = process.argv.slice(2);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: { Authorization: `Bearer ${token}` },
  retryAttempts: 0,
  on: { connected: () => say({ connected: true }) },
});

let heard = 0;
client.subscribe(
  { query: "subscription { taskEvents { event task { id status } } }" },
  {
    next: (message) => {
      say({ next: message });
      if (++heard >= Number(count)) client.dispose().then(() => process.exit(0));
    },
    error: (error) => {
      say(error instanceof Error ? { error: error.message } : { closed: error.code, reason: error.reason });
      process.exit(1);
    },
    complete: () => process.exit(0),
  },
);
