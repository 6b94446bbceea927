import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Edges stay thin: the gateway's faces are adapters over one application
 * layer. An adapter folder imports the app layer (app/), the shared HTTP plumbing (http/),
 * services/common, gen/ and its own folder — never another adapter, never the composition
 * root (index.ts). http/ serves every adapter, so it imports none of them; app/ is beneath
 * both and imports neither. auth/ is the check in front of every adapter, like
 * http/: it imports app/ and http/ and no adapter. openapi/ describes every face and
 * auth's routes, so it reads them all, and nothing but the composition root imports it. Tests may start the whole gateway through the
 * composition root.
 */

const GATEWAY = dirname(fileURLToPath(import.meta.url));
const ADAPTERS = ['rest', 'a2a', 'trpc', 'mcp', 'openai', 'web'];

/** The gateway folders each layer may import, besides its own. */
const ALLOWED: Record<string, string[]> = {
  ...Object.fromEntries(ADAPTERS.map((adapter) => [adapter, ['app', 'http']])),
  http: ['app'],
  auth: ['app', 'http'],
  openapi: ['app', 'http', 'auth', ...ADAPTERS],
  app: [],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file names: static imports, re-exports, dynamic import() and import type. */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((imported) => imported.fileName);
}

/** Where an import lands inside the gateway: its top folder, or "root" for gateway/*.ts; undefined outside. */
function gatewayArea(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(GATEWAY, resolve(dirname(from), specifier));
  if (target.startsWith('..')) return undefined;
  const parts = target.split(sep);
  return parts.length === 1 ? 'root' : parts[0];
}

function layerViolations(): string[] {
  const violations: string[] = [];
  for (const file of sourceFiles(GATEWAY)) {
    const [area = '', ...below] = relative(GATEWAY, file).split(sep);
    const allowed = ALLOWED[area];
    if (below.length === 0 || !allowed) continue;
    const isTest = file.endsWith('.test.ts');
    for (const specifier of importsOf(file)) {
      const target = gatewayArea(file, specifier);
      if (target === undefined || target === area || allowed.includes(target)) continue;
      if (isTest && target === 'root' && specifier.endsWith('/index.js')) continue;
      violations.push(
        `gateway/${relative(GATEWAY, file).split(sep).join('/')} imports '${specifier}' (${target}/), which ${area}/ may not import`,
      );
    }
  }
  return violations;
}

describe('gateway layers', () => {
  it('finds the adapters and reads their imports', () => {
    // Guards the guard: a moved folder or an unreadable import list would make the rule vacuous.
    for (const area of [...ADAPTERS, 'http', 'auth', 'openapi', 'app'])
      expect(sourceFiles(join(GATEWAY, area)).length, area).toBeGreaterThan(0);
    expect(importsOf(join(GATEWAY, 'rest', 'router.ts'))).toContain('../app/agent.js');
    expect(gatewayArea(join(GATEWAY, 'trpc', 'x.ts'), '../rest/replies.js')).toBe('rest');
    expect(gatewayArea(join(GATEWAY, 'trpc', 'x.ts'), '../../services/common/log.js')).toBeUndefined();
  });

  it('no adapter imports another adapter, http/ imports no adapter, app/ imports neither', () => {
    expect(layerViolations()).toEqual([]);
  });
});
