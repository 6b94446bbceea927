/**
 * The configuration reference (docs/configuration.md) against the schema: every field of
 * config/agent.schema.json has its row in the reference's table, with the schema's default;
 * no row names a field the schema does not have.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../test/support/agent-process.js';
import { duration } from './duration.js';
import { agentJsonSchema, isDuration } from './json-schema.js';

type Schema = { [key: string]: unknown; properties?: Record<string, Schema>; items?: Schema; default?: unknown };

interface Field {
  path: string;
  default: unknown;
  duration: boolean;
}

/** The fields a file may set: the leaves of the schema's objects, `list[]` for a list of objects and then its fields. */
function fields(schema: Schema, prefix = ''): Field[] {
  const here: Field = { path: prefix, default: schema.default, duration: isDuration(schema) };
  if (schema.type === 'object' && schema.properties) {
    return Object.entries(schema.properties).flatMap(([key, property]) => fields(property, prefix ? `${prefix}.${key}` : key));
  }
  if (schema.type === 'array' && schema.items?.type === 'object' && schema.items.properties)
    return [{ ...here, path: `${prefix}[]` }, ...fields(schema.items, `${prefix}[]`)];
  return [here];
}

/** The rows of the reference's table of fields: field → default cell. */
function referenceRows(): Map<string, string> {
  const reference = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
  const start = reference.indexOf('\n## The file\n');
  expect(start, 'docs/configuration.md has its section "## The file"').toBeGreaterThan(-1);
  const section = reference.slice(start, reference.indexOf('\nEnvironment:', start));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = /^\| `([^`]+)` \| ([^|]*(?:\\\|[^|]*)*) \|/.exec(line);
    if (cells) rows.set(cells[1]!, cells[2]!.trim());
  }
  return rows;
}

/** Whether a reference default cell says the schema's default. */
function saysDefault(cell: string, field: Field): boolean {
  // No default: `required`, or `—` for a field that may be left out (or is required only inside an optional section).
  if (field.default === undefined) return cell === 'required' || cell === '—';
  const code = /^`(.*)`$/.exec(cell)?.[1];
  if (code === undefined) return false;
  if (field.duration && typeof field.default !== 'object')
    return (
      duration.safeParse(/^\d+$/.test(code) ? Number(code) : code).data === duration.safeParse(field.default).data ||
      (code === '0' && field.default === 0)
    );
  if (typeof field.default === 'string')
    return field.default === ''
      ? code === '""'
      : code === field.default || (code.endsWith('…') && field.default.startsWith(code.slice(0, -1).trimEnd()));
  return code === JSON.stringify(field.default);
}

describe('the configuration reference, docs/configuration.md', () => {
  const rows = referenceRows();
  const schemaFields = fields(agentJsonSchema() as Schema);

  it.each(schemaFields.map((field) => [field.path, field] as const))('has a row for %s with its default', (path, field) => {
    expect(rows.has(path), `docs/configuration.md has no row for \`${path}\``).toBe(true);
    expect(
      saysDefault(rows.get(path)!, field),
      `docs/configuration.md row \`${path}\` says default ${rows.get(path)}, the schema ${JSON.stringify(field.default)}`,
    ).toBe(true);
  });

  it('names no field the schema does not have', () => {
    const known = new Set(schemaFields.map((field) => field.path));
    // Rows for whole sections that also have rows for their fields (`auth`, `webhooks[]`) are fine.
    const sections = new Set(
      schemaFields.flatMap((field) => field.path.split('.').map((_, index, parts) => parts.slice(0, index + 1).join('.'))),
    );
    expect([...rows.keys()].filter((path) => !known.has(path) && !sections.has(path))).toEqual([]);
  });
});
