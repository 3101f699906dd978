import type { ServerResponse } from "node:http"

/** Frames are batched into one `res.write` until this many characters are buffered. */
const FLUSH_THRESHOLD = 32 * 1024

/**
 * The body of one SSE response. `send` buffers frames and returns a promise only when the caller
 * has to wait (backpressure, pacing, a scheduled drop), so tight loops stay synchronous.
 */
export class EventStream {
  private buffer: Array<string> = []
  private buffered = 0
  /** Writes waiting for the socket to drain. */
  private readonly wakers = new Set<() => void>()
  /** Sleeps and hangs: the script's time, which a closed connection ends only if it is noticed at once. */
  private readonly sleepers = new Set<() => void>()
  /** Frames sent so far (what `dropAfter` counts). */
  frames = 0
  pace = 0
  dropAfter: number | undefined = undefined
  /** The connection is gone (closed by the client, dropped, or the server shut down). */
  closed = false
  ended = false

  /**
   * `noticeClosedAtOnce: false` is the API's run, which notices a closed connection only as it
   * writes next: a sleep or a hang goes on until the run is cancelled or its time is up.
   */
  constructor(
    private readonly res: ServerResponse,
    private readonly signal: AbortSignal,
    private readonly noticeClosedAtOnce = true
  ) {
    res.on("close", () => {
      this.closed = true
      this.wake(this.wakers)
      if (noticeClosedAtOnce) this.wake(this.sleepers)
    })
    signal.addEventListener("abort", () => {
      this.wake(this.wakers)
      this.wake(this.sleepers)
    }, { once: true })
  }

  get stopped(): boolean {
    return this.closed || this.ended || this.signal.aborted
  }

  private wake(wakers: Set<() => void>): void {
    for (const waker of wakers) waker()
    wakers.clear()
  }

  /** The script's time stops here: the run was cancelled, or its closed connection is noticed at once. */
  private get wakesSleepers(): boolean {
    return this.signal.aborted || (this.closed && this.noticeClosedAtOnce)
  }

  send(frame: string): Promise<void> | undefined {
    if (this.closed || this.ended) return undefined
    if (this.pace > 0) return this.sendPaced(frame)
    this.push(frame)
    if (this.dropAfter !== undefined && this.frames >= this.dropAfter) return this.drop()
    return this.buffered >= FLUSH_THRESHOLD ? this.flush() : undefined
  }

  private push(frame: string): void {
    this.buffer.push(frame)
    this.buffered += frame.length
    this.frames++
  }

  private async sendPaced(frame: string): Promise<void> {
    await this.flush()
    await this.sleep(this.pace)
    // An aborted run may still write its closing event, so only a gone connection stops here.
    if (this.closed || this.ended) return
    this.push(frame)
    if (this.dropAfter !== undefined && this.frames >= this.dropAfter) return this.drop()
    return this.flush()
  }

  /** Writes what is buffered; resolves once the socket drained if the write was refused. */
  flush(): Promise<void> | undefined {
    if (this.buffer.length === 0 || this.closed) return undefined
    const data = this.buffer.length === 1 ? this.buffer[0]! : this.buffer.join("")
    this.buffer = []
    this.buffered = 0
    return this.res.write(data) ? undefined : this.waitFor("drain")
  }

  private waitFor(event: "drain"): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.off(event, done)
        this.wakers.delete(done)
        resolve()
      }
      this.res.once(event, done)
      this.wakers.add(done)
      if (this.closed || this.signal.aborted) done()
    })
  }

  /** Sleeps, waking early if the run stops. */
  sleep(millis: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.sleepers.delete(done)
        resolve()
      }
      const timer = setTimeout(done, millis)
      this.sleepers.add(done)
      if (this.wakesSleepers) done()
    })
  }

  /** Resolves when the run is cancelled or its closed connection is noticed. */
  untilStopped(): Promise<void> {
    return new Promise((resolve) => {
      if (this.wakesSleepers) return resolve()
      this.sleepers.add(resolve)
    })
  }

  /** Sends what is buffered, then destroys the socket without ending the chunked body. */
  drop(): Promise<void> {
    const data = this.buffer.join("")
    this.buffer = []
    this.buffered = 0
    this.ended = true
    return new Promise((resolve) => {
      const destroy = (): void => {
        this.res.socket?.destroy()
        this.res.destroy()
        resolve()
      }
      if (data === "" || this.closed) destroy()
      else this.res.write(data, destroy)
    })
  }

  /** Ends the response after what is buffered. */
  end(): void {
    if (this.ended || this.closed) return
    const data = this.buffer.join("")
    this.buffer = []
    this.buffered = 0
    this.ended = true
    if (data === "") this.res.end()
    else this.res.end(data)
  }
}
