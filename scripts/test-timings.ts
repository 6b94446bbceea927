/**
 * Writes test/timings.json, the durations the test sequencer starts the slowest files first by
 * (test/support/sequencer.ts), from vitest JSON reports:
 *
 *   npx vitest run --reporter=json --outputFile=/tmp/report.json [files or --project …]
 *   npm run test:timings -- /tmp/report.json [more reports]
 *
 * Files in the reports get their measured duration (ms, rounded to 100); files of the list
 * that the reports do not cover keep theirs; files that no longer exist leave the list.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTimings, TIMINGS_FILE } from '../test/support/sequencer.js';

interface JsonReport {
  testResults: Array<{ name: string; startTime: number; endTime: number }>;
}

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const reports = process.argv.slice(2);
if (reports.length === 0) {
  console.error('usage: npm run test:timings -- REPORT.json [REPORT.json …] (vitest run --reporter=json --outputFile=REPORT.json)');
  process.exit(2);
}

const timings = readTimings();
let measured = 0;
for (const report of reports) {
  for (const file of (JSON.parse(readFileSync(report, 'utf8')) as JsonReport).testResults) {
    timings[relative(root, file.name)] = Math.max(100, Math.round((file.endTime - file.startTime) / 100) * 100);
    measured += 1;
  }
}
const kept = Object.entries(timings).filter(([file]) => existsSync(resolve(root, file)));
kept.sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
writeFileSync(TIMINGS_FILE, `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`);
console.log(`test/timings.json: ${measured} files measured, ${kept.length} listed`);
