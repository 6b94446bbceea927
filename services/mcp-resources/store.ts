import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { SafeRegex } from '../common/safe-regex.js';

/** One row of the `resources` table, as the tools return it (snake_case like every wire shape). */
export interface Resource {
  id: string;
  name: string;
  value: number;
  created_at: string;
  updated_at: string;
}

/** What a remove matched and deleted. */
export interface Removal {
  removed: number;
  ids: string[];
}

/**
 * `res_` + milliseconds since the epoch in base 36 (fixed width, so ids sort in creation order)
 * + 48 random bits, so two ids made in the same millisecond still differ.
 */
export function newResourceId(now = Date.now()): string {
  return `res_${now.toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;
}

/**
 * The SQLite table behind mcp-resources. Filtering by regex happens here in JavaScript:
 * SQLite has no REGEXP function of its own, and the patterns are RE2 regexes (linear-time).
 */
export class ResourceStore {
  private readonly db: Database.Database;
  private readonly statements: {
    insert: Database.Statement;
    all: Database.Statement;
    byId: Database.Statement;
    remove: Database.Statement;
  };

  constructor(path: string) {
    // Its folder may not exist yet: the server can start before the agent has made its data_dir.
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    // WAL: readers never wait for a writer, and the HTTP and stdio faces may share one file.
    this.db.pragma('journal_mode = WAL');
    // As the conversation store's: a commit survives the process's crash (kill -9) without an fsync of its own,
    // which would be most of the time of every call that writes.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS resources (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      value INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`);
    // Prepared once: compiling a statement costs more than running one of these.
    const columns = 'id, name, value, created_at, updated_at';
    this.statements = {
      insert: this.db.prepare(`INSERT INTO resources (${columns}) VALUES (@id, @name, @value, @created_at, @updated_at)`),
      all: this.db.prepare(`SELECT ${columns} FROM resources ORDER BY id`),
      byId: this.db.prepare(`SELECT ${columns} FROM resources WHERE id = ?`),
      remove: this.db.prepare('DELETE FROM resources WHERE id = ?'),
    };
  }

  add(name: string, value: number): Resource {
    const now = new Date();
    const resource: Resource = {
      id: newResourceId(now.getTime()),
      name,
      value,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
    this.statements.insert.run(resource);
    return resource;
  }

  /** Every resource, oldest first, or only those whose name `pattern` matches. */
  list(pattern?: SafeRegex): Resource[] {
    const all = this.statements.all.all() as Resource[];
    return pattern ? all.filter((resource) => pattern.test(resource.name)) : all;
  }

  get(id: string): Resource | undefined {
    return this.statements.byId.get(id) as Resource | undefined;
  }

  /**
   * Deletes the resource with `id`, or every resource whose name matches `pattern`; with both,
   * only the resource with that id and only when its name matches (the narrower reading of a
   * destructive request). Select and delete run in one transaction.
   */
  remove(filter: { id?: string; pattern?: SafeRegex }): Removal {
    return this.db.transaction((): Removal => {
      const candidates = filter.id !== undefined ? [this.get(filter.id)].filter((r): r is Resource => r !== undefined) : this.list();
      const { pattern } = filter;
      const doomed = pattern ? candidates.filter((resource) => pattern.test(resource.name)) : candidates;
      for (const resource of doomed) this.statements.remove.run(resource.id);
      return { removed: doomed.length, ids: doomed.map((resource) => resource.id) };
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
