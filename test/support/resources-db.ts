import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';

/** Reads the mcp-resources database directly, to check what a tool call really did. */
export function resourceNames(dbPath: string): string[] {
  if (!existsSync(dbPath)) return [];
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT name FROM resources ORDER BY created_at, id').all() as { name: string }[]).map((row) => row.name);
  } finally {
    db.close();
  }
}
