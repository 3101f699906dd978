// What cannot be made on loopback with Node's fetch: the decisions themselves, including a browser's opaque answer.
import { describe, expect, it } from "vitest"
import { decideRedirect } from "../src/internal/http/redirects.js"

const from = "https://api.example.test/v1/threads/runs"

describe("decideRedirect", () => {
  it.each([
    [307, "/v1/x", "POST", 0, { _tag: "Follow", url: "https://api.example.test/v1/x" }],
    [308, "https://api.example.test/v1/x?q=1", "POST", 0, { _tag: "Follow", url: "https://api.example.test/v1/x?q=1" }],
    [302, "/v1/x", "GET", 0, { _tag: "Follow", url: "https://api.example.test/v1/x" }],
    [302, "/v1/x", "POST", 0, { _tag: "Refuse", status: 302, location: "https://api.example.test/v1/x" }],
    [307, "https://evil.example.test/v1/x?key=secret", "GET", 0, { _tag: "Refuse", status: 307, location: "https://evil.example.test/v1/x" }],
    [307, "http://api.example.test/v1/x", "GET", 0, { _tag: "Refuse", status: 307 }],
    [307, "/v1/x", "POST", 5, { _tag: "Refuse", status: 307 }],
    [307, undefined, "POST", 0, { _tag: "Refuse", status: 307, location: undefined }],
    [0, null, "POST", 0, { _tag: "Refuse", status: 0, location: undefined }]
  ] as const)("%i to %s on %s after %i hops", (status, location, method, hops, expected) => {
    expect(decideRedirect(status, location, from, method, hops)).toMatchObject(expected)
  })

  it("names the redirect without query in its message, and says why", () => {
    const decision = decideRedirect(307, "https://evil.example.test/a?key=secret", from, "POST", 0)
    expect(decision._tag === "Refuse" && decision.message).toBe(
      "The server redirected POST https://api.example.test/v1/threads/runs (307) to https://evil.example.test/a: not followed, another origin gets no credentials"
    )
    const opaque = decideRedirect(0, null, from, "POST", 0)
    expect(opaque._tag === "Refuse" && opaque.message).toContain("the browser does not show where it leads")
  })
})
