import { approvalsConformance } from './approvals-conformance.js';
import { eventsConformance } from './events-conformance.js';
import { interruptedTurnConformance } from './interrupted-turn-conformance.js';
import { leaseConformance } from './lease-conformance.js';
import { oneRunConformance } from './one-run-conformance.js';
import { ownersConformance } from './owners-conformance.js';
import { storageConformance } from './storage-conformance.js';
import { postgresDriver } from './testing/storage-drivers.js';

// The storage tests on the PostgreSQL driver, each on a database of its own: one behaviour, both drivers.
storageConformance(postgresDriver());
oneRunConformance(postgresDriver());
interruptedTurnConformance(postgresDriver());
eventsConformance(postgresDriver());
leaseConformance(postgresDriver());
approvalsConformance(postgresDriver());
ownersConformance(postgresDriver());
