// Routing and every endpoint but runs. Guards run in the API's order: `x-api-key` (403), bearer
// token (401), the v1 thread guard (400 without a context, 403 for a thread that is missing or
// belongs to another context), then body/query validation (400), then the handler.
import type * as Wire from "../Wire.js"
import { checkApiKey, checkBearer, readSubjectToken, resolveLegacyContext, resolveV1Context } from "./auth.js"
import { bodyString, sendEmpty, sendJson, type RequestContext } from "./http.js"
import { badRequest, forbidden, nestError, notFound, problem } from "./httpError.js"
import { makeId } from "./ids.js"
import { applyPatch, PatchError } from "./jsonPatch.js"
import { handleTranscribe } from "./audio.js"
import { handleCancelRun, handleCreateRun, handleRunOnThread } from "./runs.js"
import {
  ComponentStateBody,
  CreateThreadBody,
  decodeOrFail,
  GenerateSuggestionsBody,
  McpTokenBody,
  MessagesQuery,
  OAuthTokenBody,
  SuggestionsQuery,
  ThreadsQuery,
  UpdateThreadBody
} from "./schemas.js"
import type { ServerState } from "./state.js"
import {
  byCreation,
  encodeCursor,
  messageToDto,
  page,
  parseCursor,
  parseCursorOrFail,
  suggestionToDto,
  threadToDto,
  threadWithMessagesToDto,
  type Cursor,
  type StoredThread
} from "./store.js"

type Guard = "apiKey" | "apiKeyAndBearer"

interface Route {
  readonly method: string
  readonly pattern: RegExp
  readonly guard: Guard
  readonly handle: (state: ServerState, ctx: RequestContext, params: ReadonlyArray<string>) => Promise<void> | void
}

const segment = "([^/]+)"
const route = (method: string, path: string, guard: Guard, handle: Route["handle"]): Route => ({
  method,
  pattern: new RegExp(`^${path.replace(/:\w+/g, segment)}/?$`),
  guard,
  handle
})

const queryObject = (query: URLSearchParams): { readonly [key: string]: string } => Object.fromEntries(query)

const queryUserKey = (ctx: RequestContext): string | undefined => ctx.query.get("userKey") ?? undefined

/** The v1 thread guard: the request's context must own the thread. */
const guardThread = (state: ServerState, ctx: RequestContext, threadId: string): StoredThread => {
  const contextKey = resolveV1Context(queryUserKey(ctx) ?? bodyString(ctx.body, "userKey"), ctx.bearer)
  const thread = state.store.threads.get(threadId)
  if (thread === undefined || thread.contextKey !== contextKey) throw forbidden()
  return thread
}

const findMessage = (thread: StoredThread, messageId: string) => {
  const message = thread.messages.find((candidate) => candidate.id === messageId)
  if (message === undefined) throw notFound(`Message ${messageId} not found in thread ${thread.id}`)
  return message
}

const routes: ReadonlyArray<Route> = [
  route("POST", "/v1/threads/runs", "apiKeyAndBearer", (state, ctx) => handleCreateRun(state, ctx)),

  route("POST", "/v1/threads/:threadId/runs", "apiKeyAndBearer", (state, ctx, [threadId]) =>
    handleRunOnThread(state, ctx, guardThread(state, ctx, threadId!))),

  route("DELETE", "/v1/threads/:threadId/runs/:runId", "apiKeyAndBearer", (state, ctx, [threadId, runId]) => {
    guardThread(state, ctx, threadId!)
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    handleCancelRun(state, ctx, threadId!, runId!)
  }),

  route("GET", "/v1/threads", "apiKeyAndBearer", (state, ctx) => {
    const query = decodeOrFail(ThreadsQuery, queryObject(ctx.query))
    const contextKey = resolveV1Context(query.userKey, ctx.bearer)
    const cursor = query.cursor ? parseCursorOrFail(query.cursor) : undefined
    // Newest first.
    const sorted = [...state.store.threads.values()]
      .filter((thread) => thread.contextKey === contextKey)
      .sort((a, b) => byCreation(b, a))
    const { items, hasMore } = page(sorted, cursor, query.limit ?? 20, true)
    const last = items[items.length - 1]
    sendJson(ctx.res, 200, {
      threads: items.map(threadToDto),
      ...(hasMore && last !== undefined ? { nextCursor: encodeCursor(last) } : {}),
      hasMore
    })
  }),

  route("POST", "/v1/threads", "apiKeyAndBearer", (state, ctx) => {
    const body = decodeOrFail(CreateThreadBody, ctx.body)
    const contextKey = resolveV1Context(body.userKey, ctx.bearer)
    const thread = state.store.createThread(contextKey, { metadata: body.metadata })
    for (const initial of body.initialMessages ?? []) {
      state.store.addMessage(thread, initial.role, [...initial.content], { metadata: initial.metadata })
    }
    sendJson(ctx.res, 201, threadToDto(thread))
  }),

  route("GET", "/v1/threads/:threadId", "apiKeyAndBearer", (state, ctx, [threadId]) => {
    const thread = guardThread(state, ctx, threadId!)
    sendJson(ctx.res, 200, threadWithMessagesToDto(thread))
  }),

  route("PATCH", "/v1/threads/:threadId", "apiKeyAndBearer", (state, ctx, [threadId]) => {
    const thread = guardThread(state, ctx, threadId!)
    const body = decodeOrFail(UpdateThreadBody, ctx.body)
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    if (body.name !== undefined) thread.name = body.name
    if (body.metadata !== undefined) thread.metadata = body.metadata
    state.store.touch(thread)
    sendJson(ctx.res, 200, threadToDto(thread))
  }),

  route("DELETE", "/v1/threads/:threadId", "apiKeyAndBearer", (state, ctx, [threadId]) => {
    const thread = guardThread(state, ctx, threadId!)
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    state.store.threads.delete(thread.id)
    for (const message of thread.messages) state.store.suggestions.delete(message.id)
    sendEmpty(ctx.res, 204)
  }),

  route("GET", "/v1/threads/:threadId/messages", "apiKeyAndBearer", (state, ctx, [threadId]) => {
    const thread = guardThread(state, ctx, threadId!)
    const query = decodeOrFail(MessagesQuery, queryObject(ctx.query))
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    const descending = query.order === "desc"
    const cursor = query.cursor ? parseCursorOrFail(query.cursor) : undefined
    const sorted = [...thread.messages].sort((a, b) => (descending ? byCreation(b, a) : byCreation(a, b)))
    const { items, hasMore } = page(sorted, cursor, query.limit ?? 50, descending)
    const last = items[items.length - 1]
    sendJson(ctx.res, 200, {
      messages: items.map(messageToDto),
      ...(hasMore && last !== undefined ? { nextCursor: encodeCursor(last) } : {}),
      hasMore
    })
  }),

  route("GET", "/v1/threads/:threadId/messages/:messageId", "apiKeyAndBearer", (state, ctx, [threadId, messageId]) => {
    const thread = guardThread(state, ctx, threadId!)
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    sendJson(ctx.res, 200, messageToDto(findMessage(thread, messageId!)))
  }),

  route("GET", "/v1/threads/:threadId/messages/:messageId/suggestions", "apiKeyAndBearer", (state, ctx, [threadId, messageId]) => {
    const thread = guardThread(state, ctx, threadId!)
    const query = decodeOrFail(SuggestionsQuery, queryObject(ctx.query))
    resolveV1Context(queryUserKey(ctx), ctx.bearer)
    const message = findMessage(thread, messageId!)
    let cursor: Cursor | undefined
    if (query.cursor) {
      cursor = parseCursor(query.cursor)
      if (cursor === undefined) throw problem("INVALID_CURSOR", "Invalid pagination cursor")
      if (cursor.messageId !== undefined && cursor.messageId !== message.id) {
        throw problem("INVALID_CURSOR", "Cursor does not belong to this message")
      }
    }
    const sorted = [...(state.store.suggestions.get(message.id) ?? [])].sort(byCreation)
    const { items, hasMore } = page(sorted, cursor, query.limit ?? 10, false)
    const last = items[items.length - 1]
    sendJson(ctx.res, 200, {
      suggestions: items.map(suggestionToDto),
      ...(hasMore && last !== undefined ? { nextCursor: encodeCursor(last, message.id) } : {}),
      hasMore
    })
  }),

  route("POST", "/v1/threads/:threadId/messages/:messageId/suggestions", "apiKeyAndBearer", async (state, ctx, [threadId, messageId]) => {
    const thread = guardThread(state, ctx, threadId!)
    const body = decodeOrFail(GenerateSuggestionsBody, ctx.body)
    resolveV1Context(body.userKey, ctx.bearer)
    const message = findMessage(thread, messageId!)
    const generated = await state.suggest({
      thread: threadWithMessagesToDto(thread),
      messageId: message.id,
      maxSuggestions: body.maxSuggestions ?? 3,
      availableComponents: body.availableComponents ?? []
    })
    // Generating replaces the message's suggestions.
    const saved = generated.map((suggestion) => ({
      id: makeId("sug_"),
      messageId: message.id,
      title: suggestion.title,
      detailedSuggestion: suggestion.detailedSuggestion,
      ...(suggestion.metadata === undefined ? {} : { metadata: suggestion.metadata }),
      createdAt: state.now(),
      seq: state.store.nextSeq()
    }))
    state.store.suggestions.set(message.id, saved)
    sendJson(ctx.res, 201, { suggestions: saved.map(suggestionToDto), hasMore: false })
  }),

  route("POST", "/v1/threads/:threadId/components/:componentId/state", "apiKeyAndBearer", (state, ctx, [threadId, componentId]) => {
    const thread = guardThread(state, ctx, threadId!)
    const body = decodeOrFail(ComponentStateBody, ctx.body)
    resolveV1Context(body.userKey, ctx.bearer)
    if (thread.runStatus !== "idle") {
      throw problem("RUN_ACTIVE", "Cannot update component state while a run is active", { threadId: thread.id, runStatus: thread.runStatus })
    }
    const ids = { threadId: thread.id, componentId }
    if (body.state !== undefined && body.patch !== undefined) throw problem("VALIDATION_ERROR", "Provide either 'state' or 'patch', not both", ids)
    if (body.state === undefined && body.patch === undefined) throw problem("VALIDATION_ERROR", "Either 'state' or 'patch' must be provided", ids)
    if (body.patch !== undefined && body.patch.length === 0) throw problem("VALIDATION_ERROR", "'patch' must not be empty", ids)
    let found: { readonly message: StoredThread["messages"][number]; readonly index: number } | undefined
    for (const message of thread.messages) {
      const index = message.content.findIndex((block) => block.type === "component" && block.id === componentId)
      if (index >= 0) {
        found = { message, index }
        break
      }
    }
    const block = found?.message.content[found.index]
    if (found === undefined || block === undefined || block.type !== "component") {
      throw notFound(`Component ${componentId} not found in thread ${thread.id}`)
    }
    let next: Wire.JsonObject
    if (body.patch !== undefined) {
      try {
        next = applyPatch(block.state ?? {}, body.patch)
      } catch (error) {
        if (!(error instanceof PatchError)) throw error
        throw problem("INVALID_JSON_PATCH", `Invalid JSON Patch: ${error.message}`, {
          errors: { name: error.name, message: error.message, index: error.index, operation: error.operation }
        })
      }
    } else {
      next = body.state ?? {}
    }
    found.message.content[found.index] = { ...block, state: next }
    state.store.touch(thread)
    sendJson(ctx.res, 201, { state: next })
  }),

  // The naming endpoint only exists in the pre-v1 API.
  route("POST", "/threads/:threadId/generate-name", "apiKeyAndBearer", async (state, ctx, [threadId]) => {
    const thread = state.store.threads.get(threadId!)
    if (thread === undefined || (ctx.bearer !== undefined && thread.contextKey !== ctx.bearer)) throw forbidden()
    const contextKey = resolveLegacyContext(ctx.query.get("contextKey") ?? undefined, ctx.bearer)
    if (contextKey !== undefined && contextKey !== thread.contextKey) throw notFound("Thread not found")
    if (thread.messages.length === 0) throw notFound("No messages found for thread")
    thread.name = await state.nameThread(thread.messages.map(messageToDto))
    state.store.touch(thread)
    sendJson(ctx.res, 201, {
      id: thread.id,
      createdAt: new Date(thread.createdAt).toISOString(),
      updatedAt: new Date(thread.updatedAt).toISOString(),
      name: thread.name,
      ...(thread.metadata !== undefined ? { metadata: thread.metadata } : {}),
      generationStage: thread.generationStage,
      ...(thread.statusMessage !== undefined ? { statusMessage: thread.statusMessage } : {}),
      projectId: state.projectId
    })
  }),

  route("POST", "/oauth/token", "apiKey", (state, ctx) => {
    const body = decodeOrFail(OAuthTokenBody, ctx.body)
    if (body.grant_type !== "urn:ietf:params:oauth:grant-type:token-exchange") {
      throw badRequest("Invalid grant_type. Must be 'urn:ietf:params:oauth:grant-type:token-exchange'")
    }
    const tokenTypes = ["urn:ietf:params:oauth:token-type:access_token", "urn:ietf:params:oauth:token-type:id_token"]
    if (!tokenTypes.includes(body.subject_token_type)) {
      throw badRequest(`Invalid subject_token_type. Must be one of: ${tokenTypes.join(", ")}`)
    }
    const now = state.nowSeconds()
    const identity = readSubjectToken(body.subject_token, now)
    // The issued token never outlives the subject token.
    let expiresIn = state.tokenTtlSeconds
    if (identity.exp !== undefined) {
      const remaining = identity.exp - now
      if (remaining > 0 && remaining < expiresIn) expiresIn = remaining
    }
    const accessToken = state.issuer.sign({
      sub: identity.sub,
      iss: state.projectId,
      aud: "tambo",
      iat: now,
      exp: now + expiresIn,
      ...(identity.iss !== undefined ? { original_iss: identity.iss } : {}),
      ...(identity.hd !== undefined ? { original_hd: identity.hd } : {}),
      ...(identity.tid !== undefined ? { original_tid: identity.tid } : {}),
      ...(identity.orgId !== undefined ? { original_org_id: identity.orgId } : {})
    })
    sendJson(ctx.res, 201, {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: expiresIn,
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token"
    })
  }),

  // Only the API key is checked, as the API's audio controller does.
  route("POST", "/audio/transcribe", "apiKey", (state, ctx) => handleTranscribe(state, ctx)),

  route("POST", "/auth/mcp/access-token", "apiKeyAndBearer", (state, ctx) => {
    const body = decodeOrFail(McpTokenBody, ctx.body)
    const contextKey = resolveLegacyContext(body.contextKey, ctx.bearer)
    // Without MCP servers configured the project gets no token at all.
    if (!state.mcpServers) return sendJson(ctx.res, 201, {})
    const now = state.nowSeconds()
    const expiresAt = (now + MCP_TOKEN_TTL_SECONDS) * 1000
    if (body.threadId !== undefined) {
      if (!state.store.threads.has(body.threadId)) throw notFound("Thread not found")
      const token = state.issuer.sign({ sub: body.threadId, iss: state.projectId, aud: "tambo:mcp", iat: now, exp: expiresAt / 1000 })
      return sendJson(ctx.res, 201, { mcpAccessToken: token, expiresAt, hasSession: true })
    }
    if (contextKey === undefined) {
      throw badRequest("Context key is required for sessionless tokens (provide in body or use Bearer token authentication)")
    }
    const token = state.issuer.sign({ sub: contextKey, iss: state.projectId, aud: "tambo:mcp", iat: now, exp: expiresAt / 1000 })
    sendJson(ctx.res, 201, { mcpAccessToken: token, expiresAt, hasSession: false })
  })
]

/** MCP access tokens last 15 minutes. */
const MCP_TOKEN_TTL_SECONDS = 15 * 60

export const dispatch = async (state: ServerState, ctx: RequestContext): Promise<void> => {
  let matched: { readonly route: Route; readonly params: ReadonlyArray<string> } | undefined
  for (const candidate of routes) {
    if (candidate.method !== ctx.method) continue
    const match = candidate.pattern.exec(ctx.path)
    if (match !== null) {
      matched = { route: candidate, params: match.slice(1).map(decodeURIComponent) }
      break
    }
  }
  if (matched === undefined) throw nestError(404, `Cannot ${ctx.method} ${ctx.path}`)
  checkApiKey(ctx.req.headers, state.apiKey)
  if (matched.route.guard === "apiKeyAndBearer") ctx.bearer = checkBearer(ctx.req.headers, state.issuer, state.nowSeconds())
  await matched.route.handle(state, ctx, matched.params)
}

