/**
 * Running a request with the service's credentials, and once more with a
 * newly exchanged token when the API answers 401 to an exchanged one.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Auth } from "../../Auth.js"
import type { AuthError, TamboError } from "../../TamboError.js"
import type { Credentials } from "../../TamboTransport.js"

const isUnauthorized = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ApiError" &&
  "status" in error && error.status === 401

/** Where a request gets its credentials, and forgets the ones the API rejected (an `Auth` service, or a run's view of it). */
export interface CredentialSource<E> {
  readonly credentials: Effect.Effect<Credentials, E>
  readonly invalidate: Auth.Service["invalidate"]
}

/** `f` with the current credentials; after a 401 to an exchanged token, once more with a new one. */
export const withCredentials = <A, E extends TamboError, R, E2 = AuthError>(
  auth: CredentialSource<E2>,
  f: (credentials: Credentials) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | E2, R> =>
  Effect.flatMap(auth.credentials, (credentials) =>
    credentials._tag === "Bearer"
      ? Effect.catchIf(
        f(credentials),
        isUnauthorized,
        () => Effect.zipRight(auth.invalidate(credentials), Effect.flatMap(auth.credentials, f))
      )
      : f(credentials))

/** The stream of `f`; after a 401 before anything was emitted, opened once more with a new token. */
export const withCredentialsStream = <A, E extends TamboError, R, E2 = AuthError>(
  auth: CredentialSource<E2>,
  f: (credentials: Credentials) => Stream.Stream<A, E, R>
): Stream.Stream<A, E | E2, R> =>
  Stream.unwrap(Effect.map(auth.credentials, (credentials): Stream.Stream<A, E | E2, R> => {
    if (credentials._tag !== "Bearer") return f(credentials)
    return Stream.suspend(() => {
      let emitted = false
      return f(credentials).pipe(
        Stream.mapChunks((chunk) => {
          emitted = true
          return chunk
        }),
        Stream.catchAll((error): Stream.Stream<A, E | E2, R> =>
          !emitted && isUnauthorized(error)
            ? Stream.unwrap(
              Effect.zipRight(auth.invalidate(credentials), Effect.map(auth.credentials, f))
            )
            : Stream.fail(error)
        )
      )
    })
  }))
