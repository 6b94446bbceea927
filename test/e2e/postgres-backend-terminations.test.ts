/**
 * A PostgreSQL restart or failover ends every connection of the store (SQLSTATE 57P01): two
 * mesh replicas whose events cross over LISTEN/NOTIFY live through every backend of their
 * database being terminated five times under load, answer every request after, and run no
 * approved call twice (test/support/backend-terminations.ts).
 */
import { survivesBackendTerminations } from '../support/backend-terminations.js';

survivesBackendTerminations('two replicas, events over LISTEN/NOTIFY, every backend of their database terminated', { env: {} });
