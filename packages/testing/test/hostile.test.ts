import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HostileServer } from "../src/index.js"

describe("HostileServer", () => {
  let server: HostileServer.HostileServer
  beforeAll(async () => {
    server = await HostileServer.start()
  })
  afterAll(() => server.close())

  it("answers each request with the next fault, the last one repeating, and records them", async () => {
    server.respond(
      HostileServer.status(429, { headers: { "retry-after": "2" }, body: "slow down" }),
      HostileServer.redirect(307, "/elsewhere"),
      HostileServer.frames(["one", HostileServer.paddedEvent(100)])
    )
    const first = await fetch(`${server.url}/a`, { method: "POST", body: "hello" })
    expect([first.status, first.headers.get("retry-after"), await first.text()]).toEqual([429, "2", "slow down"])
    const second = await fetch(`${server.url}/b`, { redirect: "manual" })
    expect([second.status, second.headers.get("location")]).toEqual([307, "/elsewhere"])
    for (const path of ["/c", "/d"]) {
      const third = await fetch(`${server.url}${path}`)
      const text = await third.text()
      expect(text.startsWith("data: one\n\ndata: {\"type\":\"CUSTOM\"")).toBe(true)
      expect(text.split("\n\n")[1]).toHaveLength("data: ".length + 100)
    }
    expect(server.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ["POST", "/a", "hello"],
      ["GET", "/b", ""],
      ["GET", "/c", ""],
      ["GET", "/d", ""]
    ])
  })

  it("stalls: headers arrive, the body never does until the client gives up", async () => {
    server.respond(HostileServer.headersThenStall())
    const controller = new AbortController()
    const response = await fetch(server.url, { signal: controller.signal })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const reader = response.body!.getReader()
    const read = reader.read()
    controller.abort()
    await expect(read).rejects.toThrow()
  })

  it("frameOfSize writes one frame of the given size in pieces, raw writes bytes as they are", async () => {
    server.respond(HostileServer.frameOfSize(200_000, { chunkBytes: 1024 }), HostileServer.raw(["HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]))
    const text = await (await fetch(server.url)).text()
    expect(text).toHaveLength("data: ".length + 200_000 + 2)
    expect(await (await fetch(server.url)).text()).toBe("ok")
  })
})
