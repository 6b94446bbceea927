import {
  DummyDriver,
  type Expression,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  ValueNode,
} from 'kysely';
import type { StoreTables } from './tables.js';

/** A query parameter by name: queries are built and compiled once, so a request costs no building or compiling. */
export class Param<T> implements Expression<T> {
  constructor(readonly name: string) {}
  get expressionType(): T | undefined {
    return undefined;
  }
  toOperationNode(): ValueNode {
    return ValueNode.create(this);
  }
}

export const param = (name: string): Param<never> => new Param<never>(name);

export type DialectName = 'sqlite' | 'postgres';

/** SQLite text names its parameters (`@name`), as better-sqlite3 binds them from an object. */
class SqliteNamedCompiler extends SqliteQueryCompiler {
  protected override appendValue(parameter: unknown): void {
    if (parameter === null) this.append('NULL');
    else if (parameter instanceof Param) this.append(`@${parameter.name}`);
    else throw new Error('a store query holds a value that is not a named parameter');
  }
}

/** PostgreSQL numbers its parameters; compileQueries names each. A NULL is text. */
class PostgresNamedCompiler extends PostgresQueryCompiler {
  protected override appendValue(parameter: unknown): void {
    if (parameter === null) this.append('NULL');
    else super.appendValue(parameter);
  }
}

/** A query as run: its text and the name of each (PostgreSQL: positional) parameter. */
export interface NamedQuery {
  readonly name: string;
  readonly sql: string;
  readonly parameters: readonly string[];
}

export type QueryArgs = Record<string, unknown>;

export type StoreDb = Kysely<StoreTables>;

/** A Kysely that only builds and compiles, never connects: the drivers run the compiled text themselves. */
export function queryBuilder(dialect: DialectName): StoreDb {
  const sqlite = dialect === 'sqlite';
  const [Adapter, Introspector, Compiler] = sqlite
    ? [SqliteAdapter, SqliteIntrospector, SqliteNamedCompiler]
    : [PostgresAdapter, PostgresIntrospector, PostgresNamedCompiler];
  return new Kysely<StoreTables>({
    dialect: {
      createAdapter: () => new Adapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new Introspector(db),
      createQueryCompiler: () => new Compiler(),
    },
  });
}

/** Compiles every query of a set once, keeping its name. */
export function compileQueries<Names extends string>(
  queries: Record<Names, { compile(): { sql: string; parameters: readonly unknown[] } }>,
) {
  const compiled = {} as Record<Names, NamedQuery>;
  for (const [name, query] of Object.entries(queries) as [Names, { compile(): { sql: string; parameters: readonly unknown[] } }][]) {
    const { sql: text, parameters } = query.compile();
    compiled[name] = {
      name,
      sql: text,
      parameters: parameters.map((value) => {
        if (!(value instanceof Param)) throw new Error(`query ${name} holds a value that is not a named parameter`);
        return value.name;
      }),
    };
  }
  return compiled;
}

/** A literal piece of SQL with a type for Kysely (fixed text of the store's, never input). */
export const fixed = (text: string): RawBuilder<never> => sql<never>`${sql.raw(text)}`;

/** A constant of the store's own (a status, a count) inlined in the text. */
export const lit = (value: string | number): RawBuilder<never> => sql.lit(value) as RawBuilder<unknown> as RawBuilder<never>;
