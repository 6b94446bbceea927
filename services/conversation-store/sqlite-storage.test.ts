import { describe } from 'vitest';
import { approvalsConformance } from './approvals-conformance.js';
import { eventsConformance } from './events-conformance.js';
import { historyDigestsConformance } from './history-digests-conformance.js';
import { interruptedTurnConformance } from './interrupted-turn-conformance.js';
import { lifecycleConformance } from './lifecycle-conformance.js';
import { leaseConformance } from './lease-conformance.js';
import { oneRunConformance } from './one-run-conformance.js';
import { ownersConformance } from './owners-conformance.js';
import { quorumConformance } from './quorum-conformance.js';
import { runJournalConformance } from './run-journal-conformance.js';
import { storageConformance } from './storage-conformance.js';
import { sqliteDriver } from '../../test/support/storage-drivers.js';

// The storage tests on the embedded SQLite driver: one behaviour, both drivers. Each suite in a
// describe of its own, so that its per-test set-up (a database and a store) runs for its tests only.
describe('storage', () => storageConformance(sqliteDriver()));
describe('one run', () => oneRunConformance(sqliteDriver()));
describe('interrupted turn', () => interruptedTurnConformance(sqliteDriver()));
describe('events', () => eventsConformance(sqliteDriver()));
describe('leases', () => leaseConformance(sqliteDriver()));
describe('approvals', () => approvalsConformance(sqliteDriver()));
describe('owners', () => ownersConformance(sqliteDriver()));
describe('history digests', () => historyDigestsConformance(sqliteDriver()));
describe('quorums', () => quorumConformance(sqliteDriver()));
describe('data lifecycle', () => lifecycleConformance(sqliteDriver()));
describe('run journal', () => runJournalConformance(sqliteDriver()));
