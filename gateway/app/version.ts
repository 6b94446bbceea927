import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'agent-stop-and-go';

let cached: string | undefined;

/**
 * The project's version from its package.json, found by walking up from this file: the
 * same code runs from the sources (tests) and from dist/, at different depths.
 */
export function agentVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
        cached = pkg.version;
        return cached;
      }
    } catch {
      /* no package.json here: look further up */
    }
    const parent = dirname(dir);
    if (parent === dir) {
      cached = '0.0.0';
      return cached;
    }
    dir = parent;
  }
}
