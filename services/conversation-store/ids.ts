const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The stored form of a conversation id or approval uuid, or undefined when the text cannot
 * be one. Callers treat undefined as "not found": a malformed id names nothing, and it must
 * never reach a database that would reject it with its own error (PostgreSQL's uuid type).
 */
export function storedId(value: string): string | undefined {
  const id = value.trim().toLowerCase();
  return UUID.test(id) ? id : undefined;
}

/** The stored forms of those of `values` that can be ids; the others name nothing. */
export function storedIds(values: readonly string[]): string[] {
  return values.flatMap((value) => storedId(value) ?? []);
}
