import { Events, ClientState } from "@tambo-effect/core"
const N = 100_000
const frames: string[] = []
frames.push(JSON.stringify({ type: "RUN_STARTED", threadId: "t1", runId: "r1" }))
frames.push(JSON.stringify({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" }))
for (let i = 0; i < N; i++) frames.push(JSON.stringify({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "tok ", timestamp: 1 }))
frames.push(JSON.stringify({ type: "TEXT_MESSAGE_END", messageId: "m1" }))
let t = performance.now()
for (const f of frames) JSON.parse(f)
console.log("JSON.parse", (performance.now() - t).toFixed(1))
t = performance.now()
const events: any[] = []
for (const f of frames) { const d = Events.decodeFrame(f); if (d._tag === "Right") events.push(d.right) }
console.log("decodeFrame", (performance.now() - t).toFixed(1))
for (const chunkSize of [1000, 100, 10]) {
  t = performance.now()
  let s = ClientState.initial
  for (let i = 0; i < events.length; i += chunkSize) {
    s = ClientState.reduce(s, events.slice(i, i + chunkSize).map((event) => ({ type: "EVENT", threadId: "placeholder", event, at: 1 } as const)))
  }
  console.log("reduce chunk", chunkSize, (performance.now() - t).toFixed(1))
}
