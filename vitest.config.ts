import { configDefaults, defineConfig } from 'vitest/config';
import SlowestFirst from './test/support/sequencer.js';

/** Needs a PostgreSQL server (and some NATS): test/support/requirements.ts. */
const POSTGRES = ['services/**/postgres*.test.ts', 'test/e2e/postgres*.test.ts'];
/** Drives Chromium. */
const BROWSER = ['test/e2e/**/*.browser.test.ts'];
const EXCLUDE = [...configDefaults.exclude, 'dist/**', 'gen/**'];
/**
 * Unit files that install process-wide state a later file in the same worker would see: the
 * OpenTelemetry tracer provider (set once per process, so a second file's exporter would get
 * no span) and the metric totals they read as absolute numbers. They get a process each.
 */
const PROCESS_GLOBALS = [
  'gateway/http/tracing.test.ts',
  'services/common/grpc/grpc.test.ts',
  'services/common/grpc/in-process.test.ts',
  'services/common/grpc/streaming.test.ts',
  'services/common/metrics.test.ts',
  'services/llm-gateway/llm-gateway.test.ts',
];
const UNIT = [
  'services/**/*.test.ts',
  'gateway/**/*.test.ts',
  'cli/**/*.test.ts',
  'client/**/*.test.ts',
  'deploy/**/*.test.ts',
  'web/src/**/*.test.ts',
  'test/support/**/*.test.ts',
  'test/bench/**/*.test.ts',
  'test/docs/**/*.test.ts',
];

/**
 * One run, six projects: each a part of the suite that can be run alone
 * (`npx vitest run --project postgres`). They share the three workers, and their files start in
 * one order, slowest first (test/support/sequencer.ts).
 */
export default defineConfig({
  test: {
    exclude: EXCLUDE,
    // Finds or installs what the selected suites need (a browser), or stops with one line saying what to do.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Three files at a time on two cores: an end-to-end file spends about half its time waiting
    // (on agents starting, scripted models, leases), and a third file fills those waits. Every
    // test holds on a machine busier than that (the suite is also run beside a CPU hog).
    maxWorkers: 3,
    fileParallelism: true,
    sequence: { sequencer: SlowestFirst },
    projects: [
      // Modules and services in one process: real gRPC, SQLite and HTTP on 127.0.0.1, no mesh process.
      // They share their worker's modules (isolate: false): importing the product once per
      // worker instead of once per file halves the project's time. A file that changes process
      // state puts it back in its own afterEach/afterAll, or is listed in PROCESS_GLOBALS.
      { extends: true, test: { name: 'unit', isolate: false, include: UNIT, exclude: [...EXCLUDE, ...POSTGRES, ...PROCESS_GLOBALS] } },
      { extends: true, test: { name: 'unit-globals', include: PROCESS_GLOBALS } },
      // Several services of the mesh wired together over gRPC in one process.
      { extends: true, test: { name: 'grpc', isolate: false, include: ['test/grpc/**/*.test.ts'] } },
      // Whole agents: bin/asg processes from dist/.
      {
        extends: true,
        test: { name: 'e2e', isolate: false, include: ['test/e2e/**/*.test.ts'], exclude: [...EXCLUDE, ...POSTGRES, ...BROWSER] },
      },
      { extends: true, test: { name: 'postgres', isolate: false, include: POSTGRES } },
      { extends: true, test: { name: 'browser', include: BROWSER } },
    ],
  },
});
