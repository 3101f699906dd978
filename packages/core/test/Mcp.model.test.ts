// The model-based test of MCP connections: fast-check generates sequences of commands (connect,
// connect twice at once, connect a dead URL, disconnect, disconnect while connecting, a server
// crashing, coming back, bouncing, forgetting its sessions (answering 404 to them, with their event
// streams kept open or closed), changing its tools, tool calls through the executor and
// through a kept `client` handle, a server's handlers replaced through a kept `client` handle (on
// its own session only), log levels asked for, tool timeouts given), with given server
// keys or derived ones, played against ONE `Mcp` service over the registry `Tambo.layer` wires
// and three real MCP servers on loopback. After every command the registry (with whether the
// run's tool timeout applies to each tool), the connections, the servers' sessions and the log
// level each session was asked for settle where the model (mcp/model.ts) says, and no server ran
// a call twice (a request sent again after a 404 was not taken the first time); after the
// sequence, closing the layer leaves no session, socket or timer open.
//
// Seeded, so a failure reproduces. Environment, for longer or targeted local runs:
//   MODEL_RUNS (default 200), MODEL_MAX_COMMANDS (default 10), MODEL_SEED (default 47);
//   MODEL_PATH: the `path` a failure prints, to replay it.
// A counterexample it shrinks to goes to Mcp.counterexamples.test.ts as a named test.
import { describe, it } from "@effect/vitest"
import { tamboLayer, useServer } from "./helpers.js"
import { runSequence, sequenceArbitrary } from "./mcp/model.js"

const server = useServer()

const path = process.env.MODEL_PATH

describe("MCP connections, model-based", () => {
  // `live`: real sockets, and the service's real reconnect schedule and timeouts.
  it.live.prop(
    "every sequence of commands keeps the invariants",
    [sequenceArbitrary(Number(process.env.MODEL_MAX_COMMANDS ?? 10))],
    ([sequence]) => runSequence(tamboLayer(server()), sequence),
    {
      timeout: 600_000,
      fastCheck: {
        numRuns: Number(process.env.MODEL_RUNS ?? 200),
        seed: Number(process.env.MODEL_SEED ?? 47),
        ...(path === undefined ? {} : { path })
      }
    }
  )
})
