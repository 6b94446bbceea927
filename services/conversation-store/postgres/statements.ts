/** The statements only the PostgreSQL driver runs (the store's own are in sql/queries.ts). */
export const SQL = {
  // Per-status deltas of one transaction, applied under the event_ids lock (schema.ts).
  changeCounts: `
    UPDATE conversation_counts SET count = count + deltas.delta
    FROM unnest($1::text[], $2::bigint[]) AS deltas (status, delta)
    WHERE conversation_counts.status = deltas.status`,
  // The owners' per-status deltas of one transaction, under the same lock; a first count inserts its row.
  changeOwnerCounts: `
    INSERT INTO conversation_counts_by_owner (owner, status, count)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
    ON CONFLICT (owner, status) DO UPDATE SET count = conversation_counts_by_owner.count + excluded.count`,

  // A transaction's last statements: this UPDATE's row lock, held until COMMIT, orders the next writer's ids and commit after.
  allocateEventIds: `UPDATE event_ids SET last_id = last_id + $1 RETURNING last_id`,
  insertEvents: `
    INSERT INTO events (id, conversation_id, kind, payload, created_at)
    SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[])`,

  // The NATS outbox publisher (outbox-publisher.ts): its leader lock, and the last id it published to a stream.
  tryPublisherLock: `SELECT pg_try_advisory_lock(hashtext($1)) AS locked`,
  selectPublished: `SELECT last_id FROM event_publications WHERE stream = $1`,
  savePublished: `
    INSERT INTO event_publications (stream, last_id) VALUES ($1, $2)
    ON CONFLICT (stream) DO UPDATE SET last_id = greatest(event_publications.last_id, excluded.last_id)`,

  registerReplica: `INSERT INTO store_replicas (boot_id) VALUES ($1) ON CONFLICT (boot_id) DO UPDATE SET last_seen = now()`,
  heartbeat: `UPDATE store_replicas SET last_seen = now() WHERE boot_id = $1`,
  // Rows of replicas gone for long: their marks are read as dead whether the row is there or not.
  forgetReplicas: `DELETE FROM store_replicas WHERE last_seen < now() - make_interval(secs => $1::double precision / 1000)`,
  unregisterReplica: `DELETE FROM store_replicas WHERE boot_id = $1`,
  watch: `INSERT INTO store_watches (conversation_id, boot_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
  unwatch: `DELETE FROM store_watches WHERE conversation_id = $1 AND boot_id = $2`,
} as const;

/** Channels of the live feed across replicas (event-relay.ts). */
export const STORED_EVENTS_CHANNEL = 'asg_stored_events';
export const LIVE_EVENTS_CHANNEL = 'asg_live_events';
