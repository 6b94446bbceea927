/**
 * Copies Scalar's standalone browser bundle (@scalar/api-reference, a development dependency)
 * into the build, beside the module that serves it (gateway/openapi/docs-page.ts): the packed
 * package serves `/docs` with no network and needs no Scalar package at run time.
 *   node --import tsx scripts/copy-docs-script.ts     (part of npm run build)
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BUNDLE = fileURLToPath(import.meta.resolve('@scalar/api-reference/browser/standalone.js'));
const TARGET = join(ROOT, 'dist', 'gateway', 'openapi', 'scalar-api-reference.js');

mkdirSync(dirname(TARGET), { recursive: true });
copyFileSync(BUNDLE, TARGET);
