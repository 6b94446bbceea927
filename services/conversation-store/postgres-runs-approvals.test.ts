import { afterAll, describe } from 'vitest';
import { approvalsConformance } from './approvals-conformance.js';
import { eventsConformance } from './events-conformance.js';
import { historyDigestsConformance } from './history-digests-conformance.js';
import { interruptedTurnConformance } from './interrupted-turn-conformance.js';
import { leaseConformance } from './lease-conformance.js';
import { lifecycleConformance } from './lifecycle-conformance.js';
import { oneRunConformance } from './one-run-conformance.js';
import { ownersConformance } from './owners-conformance.js';
import { quorumConformance } from './quorum-conformance.js';
import { runJournalConformance } from './run-journal-conformance.js';
import { dropFinishedTestDatabases, postgresDriver } from '../../test/support/storage-drivers.js';

// The rules of runs, events, leases, approvals, the data lifecycle and the run journal on the PostgreSQL driver, each test on a
// database of its own. Apart from postgres-storage.test.ts (the storage suite) so that the two
// halves run side by side: together they were the suite's longest file.
describe('one run', () => oneRunConformance(postgresDriver()));
describe('interrupted turn', () => interruptedTurnConformance(postgresDriver()));
describe('events', () => eventsConformance(postgresDriver()));
describe('leases', () => leaseConformance(postgresDriver()));
describe('approvals', () => approvalsConformance(postgresDriver()));
describe('owners', () => ownersConformance(postgresDriver()));
describe('history digests', () => historyDigestsConformance(postgresDriver()));
describe('quorums', () => quorumConformance(postgresDriver()));
describe('data lifecycle', () => lifecycleConformance(postgresDriver()));
describe('run journal', () => runJournalConformance(postgresDriver()));
// Each test's database goes with others: a DROP DATABASE waits for a checkpoint, drops at once share one.
afterAll(dropFinishedTestDatabases);
