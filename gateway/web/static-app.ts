import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';

/**
 * The web chat's built files (`web/dist`, made by `vite build --config web/vite.config.ts`),
 * served at `/`. Vite names assets by content hash, so they are cached for good; index.html
 * is revalidated so that a rebuilt app is picked up at once.
 */

/** The repository root: the nearest directory above this module with a package.json (source or dist/). */
function repositoryRoot(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Where the built web app is, or undefined when it was not built. */
export function findWebDist(): string | undefined {
  const root = repositoryRoot(dirname(fileURLToPath(import.meta.url)));
  const dist = root && join(root, 'web', 'dist');
  return dist && existsSync(join(dist, 'index.html')) ? dist : undefined;
}

export function webAppRouter(dist: string): Router {
  const router = express.Router();
  router.use(
    express.static(dist, {
      index: 'index.html',
      setHeaders(res, path) {
        res.setHeader('Cache-Control', path.includes(`${join(dist, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}

/**
 * Whether a GET path is one of the built app's files — `/`, a file at the top of `web/dist`,
 * anything under `/assets/` — which are open with `auth` on: a browser loads the page before it
 * can sign in, and the files hold no data. The static server itself refuses what is not a file.
 */
export function webAppPaths(dist: string): (path: string) => boolean {
  const files = new Set(
    readdirSync(dist, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => `/${entry.name}`),
  );
  return (path) => path === '/' || files.has(path) || path.startsWith('/assets/');
}
