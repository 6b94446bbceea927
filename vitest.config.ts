import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['services/**/*.test.ts', 'gateway/**/*.test.ts', 'cli/**/*.test.ts', 'deploy/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'gen/**'],
    // Finds or installs what the selected suites need (a browser), or stops with one line saying what to do.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The end-to-end suites start whole meshes; two at a time fit two cores.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
