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

/** The value of each resource by name, to check the arguments a call really ran with. */
export function resourceValues(dbPath: string): Record<string, number> {
  if (!existsSync(dbPath)) return {};
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT name, value FROM resources ORDER BY created_at, id').all() as { name: string; value: number }[];
    return Object.fromEntries(rows.map((row) => [row.name, row.value]));
  } finally {
    db.close();
  }
}
