/**
 * Entries of a sandbox state file, each kept as the JSON text last written. Saving after a request
 * then serialises only what that request changed; the file is the stored texts put together.
 */
export class StoredEntries {
  private readonly texts = new Map<string, string>();

  /** Store `value`'s JSON under `key`; true when it differs from what was stored before. */
  set(key: string, value: unknown): boolean {
    const text = JSON.stringify(value);
    if (this.texts.get(key) === text) return false;
    this.texts.set(key, text);
    return true;
  }

  /** True when there was something to forget. */
  delete(key: string): boolean {
    return this.texts.delete(key);
  }

  clear(): void {
    this.texts.clear();
  }

  get size(): number {
    return this.texts.size;
  }

  /** The entries as one JSON object text, in the order they were first stored. */
  toJson(): string {
    const parts: string[] = [];
    for (const [key, text] of this.texts) parts.push(`${JSON.stringify(key)}:${text}`);
    return `{${parts.join(',')}}`;
  }
}
