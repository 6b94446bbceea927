/**
 * The order test files start in: the slowest first, by the durations in test/timings.json
 * (measured, committed, the same on every machine). Two workers share the files; a long file
 * started last would run alone at the end while the other worker idles, so the long ones go
 * first and the many short ones fill in behind them. A file not in the list yet (a new one)
 * counts as its project's usual length. `npm run test:timings` writes the list again. Files that
 * need a browser the machine does not have yet wait until the set-up has had time to install it
 * (INSTALL_WINDOW_MS of the others' work, spread over the workers), then start, slowest first:
 * put last, the browser files would run alone at the end while the rest of the suite is done.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { chromium } from './requirements.js';

/** What a file missing from the list is taken to last, by project: the end-to-end ones start whole agents. */
const USUAL_MS: Record<string, number> = { e2e: 5_000, browser: 10_000, postgres: 10_000, grpc: 3_000 };
const UNIT_MS = 500;

export const TIMINGS_FILE = new URL('../timings.json', import.meta.url);

export function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** How long apt-get takes to install chromium on a fresh machine (about a minute), with room to spare. */
const INSTALL_WINDOW_MS = 120_000;

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const timings = readTimings();
    const expected = (spec: TestSpecification) =>
      timings[relative(spec.project.config.root, spec.moduleId)] ?? USUAL_MS[spec.project.name] ?? UNIT_MS;
    const sorted = [...files].sort((a, b) => expected(b) - expected(a) || a.moduleId.localeCompare(b.moduleId));
    if (chromium.find() !== undefined) return sorted;
    const needsBrowser = (spec: TestSpecification) => chromium.neededBy.test(spec.moduleId);
    const rest = sorted.filter((spec) => !needsBrowser(spec));
    const workers = Math.max(1, files[0]?.project.config.maxWorkers ?? 1);
    let before = 0;
    for (let work = 0; before < rest.length && work < INSTALL_WINDOW_MS * workers; before++) work += expected(rest[before]!);
    return [...rest.slice(0, before), ...sorted.filter(needsBrowser), ...rest.slice(before)];
  }
}
