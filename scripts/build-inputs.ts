/**
 * What the build was made from, so that a build is done once: `npm install` builds through
 * `prepare`, and the `npm test` after it finds the same sources and goes straight to the tests.
 *
 *   record     after a build succeeded: writes the hash of its inputs to dist/ (npm run build)
 *   unchanged  exits 0 when the inputs hash as recorded and the outputs are there, else 1
 *              (npm test builds then)
 *
 * The inputs are every file the build reads: the protos and Buf's settings, the TypeScript it
 * compiles (not the tests), the web chat, the compiler settings and the locked dependencies.
 * Contents are hashed, not times: a checkout, a stash or a copy that keeps the bytes keeps the
 * build, and any change of a byte makes a new one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RECORD = join(ROOT, 'dist', '.build-inputs.sha256');
const FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.client.json', 'buf.yaml', 'buf.gen.yaml'];
const FOLDERS = ['proto', 'services', 'gateway', 'cli', 'client', 'web'];
/** Not read by the build: tests, and the outputs of an earlier one. */
const SKIPPED = /\.test\.ts$|(^|\/)(node_modules|dist)(\/|$)/;
/** What the tests and `bin/asg` need from a build. */
const OUTPUTS = ['dist/cli/main.js', 'dist/client/index.js', 'dist/gateway/openapi/scalar-api-reference.js', 'web/dist/index.html'];

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !SKIPPED.test(path));
}

function inputsHash(): string {
  const hash = createHash('sha256');
  const paths = [...FILES.filter((file) => existsSync(join(ROOT, file))), ...FOLDERS.flatMap(filesUnder)].sort();
  for (const path of paths)
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(ROOT, path)))
      .update('\0');
  return hash.digest('hex');
}

const mode = process.argv[2];
if (mode === 'record') {
  writeFileSync(RECORD, `${inputsHash()}\n`);
} else if (mode === 'unchanged') {
  const recorded = existsSync(RECORD) ? readFileSync(RECORD, 'utf8').trim() : undefined;
  if (recorded !== undefined && OUTPUTS.every((output) => existsSync(join(ROOT, output))) && recorded === inputsHash()) {
    console.log('build: dist/ is built from these sources already (npm run build builds anyway)');
  } else {
    console.log('build: the sources changed since the last build, or there is none; building');
    process.exitCode = 1;
  }
} else {
  console.error('usage: build-inputs.ts record|unchanged');
  process.exitCode = 2;
}
