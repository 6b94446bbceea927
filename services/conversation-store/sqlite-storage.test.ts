import { approvalsConformance } from './approvals-conformance.js';
import { eventsConformance } from './events-conformance.js';
import { interruptedTurnConformance } from './interrupted-turn-conformance.js';
import { leaseConformance } from './lease-conformance.js';
import { oneRunConformance } from './one-run-conformance.js';
import { ownersConformance } from './owners-conformance.js';
import { storageConformance } from './storage-conformance.js';
import { sqliteDriver } from './testing/storage-drivers.js';

// The storage tests on the embedded SQLite driver: one behaviour, both drivers.
storageConformance(sqliteDriver());
oneRunConformance(sqliteDriver());
interruptedTurnConformance(sqliteDriver());
eventsConformance(sqliteDriver());
leaseConformance(sqliteDriver());
approvalsConformance(sqliteDriver());
ownersConformance(sqliteDriver());
