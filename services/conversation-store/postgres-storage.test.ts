import { afterAll, describe } from 'vitest';
import { storageConformance } from './storage-conformance.js';
import { dropFinishedTestDatabases, postgresDriver } from '../../test/support/storage-drivers.js';

// The storage suite on the PostgreSQL driver, each test on a database of its own: one behaviour,
// both drivers. The rules of runs, events, leases and approvals are in
// postgres-runs-approvals.test.ts, so that the two halves run side by side.
describe('storage', () => storageConformance(postgresDriver()));
// Each test's database goes with others: a DROP DATABASE waits for a checkpoint, drops at once share one.
afterAll(dropFinishedTestDatabases);
