/**
 * Compiles the product's TypeScript (the files tsconfig.json names) to dist/, file by file, with
 * esbuild: the same layout and modules tsc would write, in about a second instead of half a
 * minute. Types are checked by `npm run typecheck`, which `npm test` runs; tsconfig.json's
 * `isolatedModules` makes tsc refuse what a file-by-file compiler cannot compile alone.
 *   node --import tsx scripts/transpile.ts     (part of npm run build)
 */
import { build } from 'esbuild';
import ts from 'typescript';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const configFile = ts.readConfigFile(resolve(ROOT, 'tsconfig.json'), ts.sys.readFile.bind(ts.sys));
if (configFile.error) throw new Error(ts.flattenDiagnosticMessageText(configFile.error.messageText, '\n'));
const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
if (config.errors.length > 0)
  throw new Error(config.errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')).join('\n'));

await build({
  entryPoints: config.fileNames,
  outdir: resolve(ROOT, config.options.outDir ?? 'dist'),
  outbase: ROOT,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
