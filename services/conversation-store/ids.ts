/** A cursor id that is not a UUID starts before every row. */
export const FIRST_UUID = '00000000-0000-0000-0000-000000000000';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The stored form of an id, or undefined (not found): a malformed id must never reach PostgreSQL's uuid type. */
export function storedId(value: string): string | undefined {
  const id = value.trim().toLowerCase();
  return UUID.test(id) ? id : undefined;
}

/** The stored forms of those of `values` that can be ids; the others name nothing. */
export function storedIds(values: readonly string[]): string[] {
  return values.flatMap((value) => storedId(value) ?? []);
}
