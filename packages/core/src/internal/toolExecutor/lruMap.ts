/**
 * A bounded map that forgets its least recently used entries.
 *
 * @internal
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size
  }

  /** Reads an entry and marks it as the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key)
    if (value === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, value)
    return value
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  /** Stores an entry (`undefined` values are not stored) as the most recently used. */
  set(key: K, value: V): void {
    if (value === undefined) return
    this.entries.delete(key)
    this.entries.set(key, value)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }

  /** Deletes every entry whose key `drop` selects. */
  deleteWhere(drop: (key: K) => boolean): void {
    for (const key of [...this.entries.keys()]) if (drop(key)) this.entries.delete(key)
  }
}
