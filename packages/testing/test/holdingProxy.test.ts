import { it as effectIt } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as http from "node:http"
import type * as net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { HoldingProxy } from "../src/index.js"

/** A target on loopback: answers each request with `answer`, recording what it received. */
const startTarget = async (
  answer: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void = (req, res, body) => {
    res.writeHead(200, { "content-type": "application/json", "x-target": "yes" })
    res.end(JSON.stringify({ method: req.method, url: req.url, body }))
  }
) => {
  const received: Array<string> = []
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => {
      received.push(`${req.method} ${req.url}`)
      answer(req, res, Buffer.concat(parts).toString("utf8"))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const target = {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    received,
    /** Resolves once the target closed: only when no connection to it is left open. */
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
  started.push(() => {
    server.closeAllConnections()
    return target.close()
  })
  return target
}

const started: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((close) => close()))
})

const startProxy = async (target: { readonly url: string }) => {
  const proxy = await HoldingProxy.start(target)
  started.push(proxy.close)
  return proxy
}

/** A promise and what settles it, for a target that waits on the test. */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

/** A target that sends its headers and a first event at once, and the rest once `rest` opens. */
const streamingTarget = async () => {
  const rest = gate()
  const answered = gate()
  const serverSideClosed = gate()
  const target = await startTarget((_, res) => {
    res.on("close", serverSideClosed.open)
    res.on("finish", answered.open)
    res.writeHead(200, { "content-type": "text/event-stream", "x-target": "yes" })
    res.write("data: one\n\n")
    void rest.opened.then(() => res.end("data: two\n\n"))
  })
  return { target, rest, answered: answered.opened, serverSideClosed: serverSideClosed.opened }
}

describe("HoldingProxy", () => {
  it("passes a request it does not hold straight through, body, status and headers unchanged", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    proxy.holdRequest((request) => request.path === "/held")
    const response = await fetch(`${proxy.url}/echo?x=1`, { method: "POST", body: "hello" })
    expect([response.status, response.headers.get("x-target")]).toEqual([200, "yes"])
    expect(await response.json()).toEqual({ method: "POST", url: "/echo?x=1", body: "hello" })
    expect(target.received).toEqual(["POST /echo?x=1"])
  })

  it("holds a matched request before the server sees it, and sends it on release", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdRequest((request) => request.method === "PUT" && request.url === "/item?id=1")
    const response = fetch(`${proxy.url}/item?id=1`, { method: "PUT", body: "new" })
    await held.arrived
    const other = await fetch(`${proxy.url}/other`)
    expect(other.status).toBe(200)
    expect(target.received).toEqual(["GET /other"])
    held.release()
    expect(await (await response).json()).toEqual({ method: "PUT", url: "/item?id=1", body: "new" })
    expect(target.received).toEqual(["GET /other", "PUT /item?id=1"])
  })

  it("holds the answer of a matched request: the server answered, the client gets it on release", async () => {
    let version = 1
    const target = await startTarget((_, res) => res.end(`version ${version}`))
    const proxy = await startProxy(target)
    const held = proxy.holdResponse((request) => request.path === "/read")
    const read = fetch(`${proxy.url}/read`)
    await held.arrived
    expect(target.received).toEqual(["GET /read"])
    version = 2
    held.release()
    expect(await (await read).text()).toBe("version 1")
  })

  it("holds only the next matching request: the one after goes through", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdRequest((request) => request.path === "/read")
    const first = fetch(`${proxy.url}/read?n=1`)
    await held.arrived
    const second = await fetch(`${proxy.url}/read?n=2`)
    expect(await second.json()).toMatchObject({ url: "/read?n=2" })
    held.release()
    expect(await (await first).json()).toMatchObject({ url: "/read?n=1" })
  })

  it("answers a held request with a failure instead: the server never sees it", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    // Decided before it came: answered as soon as it comes.
    proxy.holdRequest((request) => request.method === "PATCH").fail(503)
    const response = await fetch(`${proxy.url}/thread`, { method: "PATCH", body: "{}" })
    expect([response.status, await response.json()]).toEqual([503, { message: "unavailable" }])
    expect(target.received).toEqual([])
  })

  /** The system error code a fetch failed with. */
  const failedWith = (request: Promise<Response>) =>
    request.then(
      () => "answered",
      (error: { readonly cause?: { readonly code?: string } }) => error.cause?.code
    )

  it("resets the connection of a held response: the server took the request, the client gets no status", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdResponse((request) => request.method === "POST")
    const request = fetch(`${proxy.url}/runs`, { method: "POST", body: "{}" })
    await held.arrived
    held.reset()
    expect(await failedWith(request)).toBe("ECONNRESET")
    expect(target.received).toEqual(["POST /runs"])
    expect(proxy.abandoned()).toBe(0)
  })

  it("resets the connection of a held request: the server never sees it", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    proxy.holdRequest((request) => request.method === "POST").reset()
    expect(await failedWith(fetch(`${proxy.url}/runs`, { method: "POST", body: "{}" }))).toBe("ECONNRESET")
    expect(target.received).toEqual([])
  })

  it("a streamed SSE response goes through chunk by chunk, not once it ended", async () => {
    const { rest: second, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const response = await fetch(`${proxy.url}/v1/threads/runs`, { method: "POST" })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    const first = await reader.read()
    // The target has not ended its response: this chunk came through on its own.
    expect(decoder.decode(first.value)).toBe("data: one\n\n")
    second.open()
    let rest = ""
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value)
    expect(rest).toBe("data: two\n\n")
  })

  it("a held response that streams goes through chunk by chunk once released", async () => {
    const { rest: second, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdResponse(() => true)
    const response = fetch(`${proxy.url}/stream`)
    await held.arrived
    held.release()
    const reader = (await response).body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: one\n\n")
    second.open()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: two\n\n")
    expect((await reader.read()).done).toBe(true)
  })

  it("holds the body of a matched answer: its status and headers reach the client at once, its body on release", async () => {
    const { answered, rest, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdBody((request) => request.method === "POST" && request.path.endsWith("/runs"))
    const response = await fetch(`${proxy.url}/v1/threads/runs`, { method: "POST", body: "{}" })
    await held.arrived
    expect([response.status, response.headers.get("content-type"), response.headers.get("x-target")]).toEqual([
      200,
      "text/event-stream",
      "yes"
    ])
    let body: string | undefined
    const reading = response.text().then((text) => (body = text))
    rest.open()
    await answered
    // The server sent all of it, and another request went through the proxy and back since.
    expect(await (await fetch(`${proxy.url}/other`)).text()).toBe("data: one\n\ndata: two\n\n")
    expect(body).toBeUndefined()
    held.release()
    expect(await reading).toBe("data: one\n\ndata: two\n\n")
  })

  it("a held body that streams goes through chunk by chunk once released", async () => {
    const { rest, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdBody(() => true)
    const response = await fetch(`${proxy.url}/stream`)
    await held.arrived
    held.release()
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    // The target has not ended its answer: this chunk came through on its own.
    expect(decoder.decode((await reader.read()).value)).toBe("data: one\n\n")
    rest.open()
    expect(decoder.decode((await reader.read()).value)).toBe("data: two\n\n")
    expect((await reader.read()).done).toBe(true)
  })

  it("a held body released before the answer came goes straight through", async () => {
    const { rest, target } = await streamingTarget()
    const proxy = await startProxy(target)
    proxy.holdBody(() => true).release()
    rest.open()
    expect(await (await fetch(`${proxy.url}/stream`)).text()).toBe("data: one\n\ndata: two\n\n")
  })

  it("a client that goes while the body is held closes the connection to the server too", async () => {
    const { serverSideClosed, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdBody(() => true)
    const controller = new AbortController()
    const response = await fetch(`${proxy.url}/stream`, { signal: controller.signal })
    await held.arrived
    const body = response.text().then(() => "read", () => "aborted")
    controller.abort()
    expect(await body).toBe("aborted")
    await serverSideClosed
    await expect.poll(() => proxy.abandoned()).toBe(1)
    held.release()
    // No connection to the target is left open.
    await target.close()
  })

  it("failing a held body drops the connection mid-answer, to the client and to the server", async () => {
    const { serverSideClosed, target } = await streamingTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdBody(() => true)
    const response = await fetch(`${proxy.url}/stream`)
    await held.arrived
    expect(response.status).toBe(200)
    held.fail()
    await expect(response.text()).rejects.toThrow()
    await serverSideClosed
    // The proxy ended it: its client did not go.
    expect(proxy.abandoned()).toBe(0)
    await target.close()
  })

  it("closing with a held body ends it, and leaves no connection to the server open", async () => {
    const { target } = await streamingTarget()
    const proxy = await HoldingProxy.start(target)
    const held = proxy.holdBody(() => true)
    const response = await fetch(`${proxy.url}/stream`)
    await held.arrived
    const body = response.text().then(() => "read", () => "ended")
    await proxy.close()
    expect(await body).toBe("ended")
    held.release()
    // The target closes only once every connection to it ended.
    await target.close()
  })

  it("a connection the server drops mid-stream reaches the client as a drop, which is not a client that went", async () => {
    const target = await startTarget((req, res) => {
      if (req.url !== "/stream") return void res.end()
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("data: one\n\n", () => req.socket.destroy())
    })
    const proxy = await startProxy(target)
    const response = await fetch(`${proxy.url}/stream`)
    await expect(response.text()).rejects.toThrow()
    // By the time the next request reached the proxy, the drop is long done and not counted;
    // that request's client going is.
    const held = proxy.holdRequest(() => true)
    const controller = new AbortController()
    const next = fetch(`${proxy.url}/next`, { signal: controller.signal }).catch(() => undefined)
    await held.arrived
    expect(proxy.abandoned()).toBe(0)
    controller.abort()
    await next
    await expect.poll(() => proxy.abandoned()).toBe(1)
  })

  it("counts a request whose client went while it was held", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdRequest(() => true)
    const controller = new AbortController()
    const request = fetch(`${proxy.url}/upload`, { method: "POST", body: "bytes", signal: controller.signal })
      .then(() => "answered", () => "aborted")
    await held.arrived
    controller.abort()
    expect(await request).toBe("aborted")
    await expect.poll(() => proxy.abandoned()).toBe(1)
    held.release()
    expect(target.received).toEqual([])
  })

  it("a held request told to forward after its client went reaches the server, body whole, once released: it arrives late", async () => {
    const bodies: Array<string> = []
    const target = await startTarget((_, res, body) => {
      bodies.push(body)
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.end("data: late\n\n")
    })
    const proxy = await startProxy(target)
    const held = proxy.holdRequest(() => true, { forwardAfterClientGone: true })
    const controller = new AbortController()
    const request = fetch(`${proxy.url}/runs`, { method: "POST", body: "the message", signal: controller.signal })
      .then(() => "answered", () => "aborted")
    await held.arrived
    controller.abort()
    expect(await request).toBe("aborted")
    await expect.poll(() => proxy.abandoned()).toBe(1)
    expect(target.received).toEqual([])
    held.release()
    await expect.poll(() => target.received).toEqual(["POST /runs"])
    expect(bodies).toEqual(["the message"])
    // The proxy goes on as before: the next request passes through.
    expect((await fetch(`${proxy.url}/next`)).status).toBe(200)
  })

  it("a held request told to forward after its client went, and its client stays: released, it goes through as any held request", async () => {
    const target = await startTarget()
    const proxy = await startProxy(target)
    const held = proxy.holdRequest(() => true, { forwardAfterClientGone: true })
    const response = fetch(`${proxy.url}/item`, { method: "PUT", body: "new" })
    await held.arrived
    held.release()
    expect(await (await response).json()).toEqual({ method: "PUT", url: "/item", body: "new" })
  })

  it("closing with a held request ends it, and leaves no connection to the server open", async () => {
    const target = await startTarget()
    const proxy = await HoldingProxy.start(target)
    const heldRequest = proxy.holdRequest((request) => request.path === "/request")
    const heldResponse = proxy.holdResponse((request) => request.path === "/response")
    const outcome = (path: string) => fetch(`${proxy.url}${path}`).then(() => "answered", () => "ended")
    const request = outcome("/request")
    const response = outcome("/response")
    await Promise.all([heldRequest.arrived, heldResponse.arrived])
    await proxy.close()
    expect(await Promise.all([request, response])).toEqual(["ended", "ended"])
    heldRequest.release()
    heldResponse.release()
    expect(target.received).toEqual(["GET /response"])
    // The target closes only once every connection to it ended.
    await target.close()
  })

  effectIt.live("scoped: the proxy closes with its scope", () =>
    Effect.gen(function* () {
      const target = yield* Effect.promise(() => startTarget())
      const scope = yield* Scope.make()
      const proxy = yield* HoldingProxy.scoped(target).pipe(Scope.extend(scope))
      const held = proxy.holdRequest(() => true)
      const request = Effect.runPromiseExit(Effect.tryPromise(() => fetch(`${proxy.url}/a`)))
      yield* Effect.promise(() => held.arrived)
      yield* Scope.close(scope, Exit.void)
      expect(Exit.isFailure(yield* Effect.promise(() => request))).toBe(true)
      const after = yield* Effect.either(Effect.tryPromise(() => fetch(`${proxy.url}/b`)))
      expect(after._tag).toBe("Left")
      yield* Effect.promise(() => target.close())
    }))
})
