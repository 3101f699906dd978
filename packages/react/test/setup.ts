/**
 * happy-dom plays a browser's devtools: a fetch answered with a 4xx or 5xx
 * logs "GET <url> 403 (Forbidden)", and a refused connection logs its error,
 * through the test's console. The tests that provoke them assert the typed
 * error the SDK makes of them, so the lines only repeat it. Only what
 * happy-dom's fetch logs is dropped: React's warnings and everything else
 * still print.
 */
const fromHappyDomFetch = (): boolean => /happy-dom[\\/](?:lib|src)[\\/]fetch[\\/]/.test(new Error().stack ?? "")

const error = console.error
console.error = (...args: Array<unknown>) => {
  if (!fromHappyDomFetch()) error.apply(console, args)
}
