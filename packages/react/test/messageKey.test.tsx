// @vitest-environment happy-dom
import { render } from "@testing-library/react"
import { Script } from "@tambo-effect/testing"
import { useEffect } from "react"
import { describe, expect, it } from "vitest"
import { messageKey, type ReactTamboThreadMessage, type TamboClient, useTambo, useTamboClient } from "../src/index.js"
import { connection, until, useServer, wrapperFor } from "./helpers.js"

const server = useServer()

describe("messageKey", () => {
  it("keeps a message's element mounted when the server's id replaces its local one", async () => {
    server().setScript([Script.delay(30), Script.text("Hello")])
    // Mounts per list and per message text; the ids each row rendered with.
    const mounts = new Map<string, number>()
    const ids: Array<string> = []
    const Row = ({ list, message }: { readonly list: string; readonly message: ReactTamboThreadMessage }) => {
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("")
      if (list === "byKey" && message.role === "user") ids.push(message.id)
      useEffect(() => {
        mounts.set(`${list}:${text}`, (mounts.get(`${list}:${text}`) ?? 0) + 1)
      }, [])
      return <li>{text}</li>
    }
    let client: TamboClient | undefined
    const Lists = () => {
      client = useTamboClient()
      const { messages } = useTambo()
      return (
        <>
          <ul>{messages.map((message) => <Row key={messageKey(message)} list="byKey" message={message} />)}</ul>
          <ul>{messages.map((message) => <Row key={message.id} list="byId" message={message} />)}</ul>
        </>
      )
    }
    render(<Lists />, { wrapper: wrapperFor(connection(server())) })
    await until(() => client !== undefined, "the client")
    const thread = await client!.run("hi").thread
    const stored = server().threads.get(thread.id)!.messages[0]!.id
    await until(() => ids.at(-1) === stored, "the user's message under the server's id")
    expect(ids[0]).toMatch(/^local_user_/)
    expect(mounts.get("byKey:hi")).toBe(1)
    // Keyed by id, the same message was mounted again when its id changed.
    expect(mounts.get("byId:hi")).toBe(2)
  })

  it("is the message's key when it has one, else its id", () => {
    expect(messageKey({ id: "msg_1" })).toBe("msg_1")
    expect(messageKey({ id: "msg_1", key: "local_user_1" })).toBe("local_user_1")
  })
})
