import { QUERIES, type QueryName } from '../../services/conversation-store/sql/queries.js';

/** The SQLite text of every statement of the store (sql/queries.ts), by name: what the driver prepares, and its query plans. */
export const SQL = Object.fromEntries(Object.entries(QUERIES.sqlite).map(([name, query]) => [name, query.sql])) as Record<
  QueryName,
  string
>;
