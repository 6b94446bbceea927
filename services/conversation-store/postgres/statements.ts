/**
 * Every statement of the PostgreSQL driver, as text with positional parameters: no SQL is
 * ever built from input. Named (`name` in pg's query config) where they run per request, so
 * each connection parses and plans them once.
 */

/**
 * An expiry as the rows of both drivers hold it (rows.ts): ISO text with milliseconds, in UTC.
 * Stored as a timestamptz, compared with the database's now().
 */
const EXPIRES_AT = `to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at`;

/** The approval columns of ApprovalRow (rows.ts), without the insertion `position`. */
const APPROVAL_COLUMNS = `uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description, remote_task_id,
  remote_agent_name, status, created_at, decided_at, updated_at, agent_chain, reason, outcome_unknown, replaces_uuid,
  decided_by, via, edited_args, ${EXPIRES_AT}, on_timeout`;

/**
 * A conversation row with its run, and whether its running mark belongs to a live store
 * replica ($1: this replica's boot id, $2: how long a replica stays live without a heartbeat,
 * in milliseconds).
 */
const CONVERSATION_WITH_RUN = `
  SELECT conversations.*, runs.state AS run_state, runs.schema_version AS run_schema_version,
         coalesce(runs.revision, 0) AS run_revision,
         (conversations.running_turn_boot = $1 OR EXISTS (
            SELECT 1 FROM store_replicas
            WHERE boot_id = conversations.running_turn_boot AND last_seen > now() - make_interval(secs => $2::double precision / 1000)
         )) AS running_turn_boot_live,
         EXISTS (
            SELECT 1 FROM store_watches JOIN store_replicas USING (boot_id)
            WHERE store_watches.conversation_id IN (conversations.id::text, '') AND store_watches.boot_id <> $1
              AND store_replicas.last_seen > now() - make_interval(secs => $2::double precision / 1000)
         ) AS watched_elsewhere
  FROM conversations LEFT JOIN runs ON runs.conversation_id = conversations.id`;

export const SQL = {
  insertConversation: `
    INSERT INTO conversations (id, session_id, status, message_count, created_at, updated_at, a2a_dialect, a2a_context_id, owner)
    VALUES ($1, $2, 'active', 0, $3, $3, $4, $5, $6)`,
  newestCreatedAt: `SELECT created_at FROM conversations ORDER BY created_at DESC, id DESC LIMIT 1`,
  // The lock every write of a conversation takes first: changes of one conversation are
  // serialized, and the row read next (a new statement, a new snapshot) is the latest.
  lockConversation: `SELECT id FROM conversations WHERE id = $1 FOR UPDATE`,
  selectConversation: `${CONVERSATION_WITH_RUN} WHERE conversations.id = $3`,
  updateConversation: `
    UPDATE conversations
    SET status = $2, pending_approval_uuid = $3, message_count = $4, updated_at = $5, input_tokens = $6, output_tokens = $7
    WHERE id = $1`,
  firstPage: `${CONVERSATION_WITH_RUN} ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT $3`,
  pageAfter: `
    ${CONVERSATION_WITH_RUN}
    WHERE (conversations.created_at, conversations.id) < ($3, $4::uuid)
    ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT $5`,
  // One owner's conversations, through conversations_by_owner.
  ownerFirstPage: `${CONVERSATION_WITH_RUN} WHERE conversations.owner = $3 ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT $4`,
  ownerPageAfter: `
    ${CONVERSATION_WITH_RUN}
    WHERE conversations.owner = $3 AND (conversations.created_at, conversations.id) < ($4, $5::uuid)
    ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT $6`,
  writeRun: `
    INSERT INTO runs (conversation_id, state, schema_version, revision, updated_at)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (conversation_id) DO UPDATE
    SET state = excluded.state, schema_version = excluded.schema_version, revision = excluded.revision, updated_at = excluded.updated_at`,
  selectCounts: `SELECT status, count FROM conversation_counts`,
  // Per-status deltas of one transaction, applied under the event_ids lock (schema.ts).
  changeCounts: `
    UPDATE conversation_counts SET count = count + deltas.delta
    FROM unnest($1::text[], $2::bigint[]) AS deltas (status, delta)
    WHERE conversation_counts.status = deltas.status`,
  selectOwnerCounts: `SELECT status, count FROM conversation_counts_by_owner WHERE owner = $1`,
  // The owners' per-status deltas of one transaction, under the same lock; a first count inserts its row.
  changeOwnerCounts: `
    INSERT INTO conversation_counts_by_owner (owner, status, count)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
    ON CONFLICT (owner, status) DO UPDATE SET count = conversation_counts_by_owner.count + excluded.count`,

  insertMessage: `
    INSERT INTO messages (conversation_id, seq, id, role, content, tool_call, created_at, input_tokens, output_tokens, compaction, node)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  selectMessages: `SELECT * FROM messages WHERE conversation_id = $1 ORDER BY seq`,
  selectMessagesBefore: `SELECT * FROM messages WHERE conversation_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
  selectMessagesAfter: `SELECT * FROM messages WHERE conversation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
  selectMessagePosition: `SELECT conversation_id, seq FROM messages WHERE id = $1`,

  insertApproval: `
    INSERT INTO approvals (uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description,
                           remote_task_id, remote_agent_name, status, created_at, decided_at, updated_at, agent_chain,
                           outcome_unknown, replaces_uuid, expires_at, on_timeout)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, NULL, $10, $11, $12, $13,
            now() + make_interval(secs => $14::double precision / 1000), $15)
    RETURNING ${EXPIRES_AT}`,
  selectApproval: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE uuid = $1`,
  selectPendingApprovals: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE conversation_id = $1 AND status = 'pending'
    ORDER BY created_at, position`,
  selectPendingApprovalsOfConversations: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE conversation_id = ANY($1::uuid[]) AND status = 'pending'
    ORDER BY conversation_id, created_at, position`,
  // The exactly-once claim: only the update that still sees 'pending' wins.
  // Under READ COMMITTED a second claimer waits for the first one's row lock, then re-reads
  // the row and finds it decided: it updates nothing.
  // The decision keeps who made it, through which face, and an approval's edited arguments.
  // A claim on time ($8) also needs the approval's expires_at not to have passed, on the
  // database's clock (the one expires_at was set on).
  claimApproval: `
    UPDATE approvals SET status = $2, decided_at = $3, updated_at = $3, reason = $4, decided_by = $5, via = $6, edited_args = $7
    WHERE uuid = $1 AND status = 'pending' AND (NOT $8::boolean OR expires_at IS NULL OR expires_at > now())
    RETURNING ${APPROVAL_COLUMNS}`,
  moveApproval: `
    UPDATE approvals SET status = $3, updated_at = $4
    WHERE uuid = $1 AND status = $2
    RETURNING ${APPROVAL_COLUMNS}`,
  interruptApproval: `
    UPDATE approvals SET status = 'interrupted', updated_at = $2
    WHERE uuid = $1 AND status IN ('approved', 'executing') AND updated_at <= $3
    RETURNING ${APPROVAL_COLUMNS}`,
  // UpdateRun's interrupted_approval: only an executing call of this conversation.
  interruptExecutingApproval: `
    UPDATE approvals SET status = 'interrupted', updated_at = $3
    WHERE uuid = $1 AND conversation_id = $2 AND status = 'executing'
    RETURNING ${APPROVAL_COLUMNS}`,
  pendingApprovalsFirstPage: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE status = 'pending'
    ORDER BY created_at, uuid LIMIT $1`,
  pendingApprovalsPageAfter: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE status = 'pending' AND (created_at, uuid) > ($1, $2::uuid)
    ORDER BY created_at, uuid LIMIT $3`,
  selectUnfinishedApprovals: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE conversation_id = $1 AND status IN ('approved', 'executing')
    ORDER BY created_at, uuid`,
  // ListApprovals, after a (created_at, uuid) cursor ('' before every row): for each
  // status asked for, a walk of approvals_by_status that stops at the page's size, merged; or the
  // approvals of one conversation through its index.
  approvalsOfStatusesAfter: `
    SELECT page.* FROM unnest($1::text[]) AS asked (status)
    CROSS JOIN LATERAL (
      SELECT ${APPROVAL_COLUMNS} FROM approvals
      WHERE approvals.status = asked.status AND (created_at, uuid) > ($2, $3::uuid)
      ORDER BY created_at, uuid LIMIT $4
    ) AS page
    ORDER BY page.created_at, page.uuid LIMIT $4`,
  approvalsOfConversationAfter: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE conversation_id = $1 AND status = ANY($2::text[]) AND (created_at, uuid) > ($3, $4::uuid)
    ORDER BY created_at, uuid LIMIT $5`,
  // ListDueApprovals: the partial index holds only pending approvals with an expiry.
  dueApprovals: `
    SELECT ${APPROVAL_COLUMNS} FROM approvals
    WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= now()
    ORDER BY approvals.expires_at, uuid LIMIT $1`,

  // The audit trail: appended, never changed; newest first, before an id.
  insertAudit: `
    INSERT INTO audit (at, kind, actor, via, subject, detail_json) VALUES ($1, $2, $3, $4, $5, $6)
    RETURNING id, at, kind, actor, via, subject, detail_json`,
  auditBefore: `SELECT * FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2`,
  auditOfKindsBefore: `
    SELECT page.* FROM unnest($1::text[]) AS asked (kind)
    CROSS JOIN LATERAL (SELECT * FROM audit WHERE audit.kind = asked.kind AND id < $2 ORDER BY id DESC LIMIT $3) AS page
    ORDER BY page.id DESC LIMIT $3`,

  // Webhook cursors, on the database's clock. A claim is one statement: it inserts the
  // cursor of a new endpoint at the newest event id, or — on the row it locked — takes a lease
  // that is free, expired, the caller's own ($2) or an earlier boot's of its node ($3); two
  // replicas claiming at once are serialized on the row, and the second one sees the first one's
  // lease. No row back: another replica holds it.
  claimWebhookCursor: `
    INSERT INTO webhook_cursors (endpoint, last_event_id, lease_owner, lease_node, lease_expires_at)
    VALUES ($1, (SELECT last_id FROM event_ids), $2, $3, now() + make_interval(secs => $4::double precision / 1000))
    ON CONFLICT (endpoint) DO UPDATE
    SET lease_owner = excluded.lease_owner, lease_node = excluded.lease_node, lease_expires_at = excluded.lease_expires_at
    WHERE webhook_cursors.lease_owner IS NULL OR webhook_cursors.lease_expires_at <= now()
       OR webhook_cursors.lease_owner = excluded.lease_owner OR webhook_cursors.lease_node = excluded.lease_node
    RETURNING last_event_id`,
  selectWebhookCursor: `SELECT last_event_id FROM webhook_cursors WHERE endpoint = $1`,
  advanceWebhookCursor: `
    UPDATE webhook_cursors
    SET last_event_id = greatest(last_event_id, $3), lease_expires_at = now() + make_interval(secs => $4::double precision / 1000)
    WHERE endpoint = $1 AND lease_owner = $2`,

  // The events of one transaction get their ids here, as its last statements: the row lock
  // taken by this UPDATE is held until COMMIT, so the next writer's ids follow these and its
  // commit follows this one (docs/architecture.md, "Event ids on PostgreSQL").
  allocateEventIds: `UPDATE event_ids SET last_id = last_id + $1 RETURNING last_id`,
  insertEvents: `
    INSERT INTO events (id, conversation_id, kind, payload, created_at)
    SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[])`,
  selectEventsAfter: `SELECT * FROM events WHERE id > $1 ORDER BY id LIMIT $2`,
  selectConversationEventsAfter: `SELECT * FROM events WHERE conversation_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  // Committed ids are gap-free, so the newest is the counter's value as of this snapshot.
  latestEventId: `SELECT last_id AS id FROM event_ids`,

  upsertPushConfig: `
    INSERT INTO push_configs (conversation_id, id, url, token, dialect, created_at)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (conversation_id, id) DO UPDATE SET url = excluded.url, token = excluded.token, dialect = excluded.dialect
    RETURNING conversation_id::text AS conversation_id, id, url, token, dialect, created_at`,
  selectPushConfig: `SELECT conversation_id::text AS conversation_id, id, url, token, dialect, created_at FROM push_configs WHERE conversation_id = $1 AND id = $2`,
  selectPushConfigs: `SELECT conversation_id::text AS conversation_id, id, url, token, dialect, created_at FROM push_configs WHERE conversation_id = $1 ORDER BY created_at, id`,
  countPushConfigs: `SELECT count(*)::int AS n FROM push_configs WHERE conversation_id = $1`,
  deletePushConfig: `DELETE FROM push_configs WHERE conversation_id = $1 AND id = $2`,
  upsertHistoryDigest: `
    INSERT INTO history_digests (conversation_id, owner_key, digest) VALUES ($1, $2, $3)
    ON CONFLICT (conversation_id) DO UPDATE SET digest = excluded.digest, recorded = excluded.recorded`,
  // One seek of history_digests_by_digest.
  selectConversationByHistory: `
    SELECT conversation_id::text AS id FROM history_digests WHERE digest = $1 AND owner_key = $2 ORDER BY recorded DESC LIMIT 1`,
  // The NATS outbox publisher (outbox-publisher.ts): its leader lock, and the last id it published to a stream.
  tryPublisherLock: `SELECT pg_try_advisory_lock(hashtext($1)) AS locked`,
  selectPublished: `SELECT last_id FROM event_publications WHERE stream = $1`,
  savePublished: `
    INSERT INTO event_publications (stream, last_id) VALUES ($1, $2)
    ON CONFLICT (stream) DO UPDATE SET last_id = greatest(event_publications.last_id, excluded.last_id)`,

  // The lease is part of the mark: set with it ($4..$6 NULL for a mark without one:
  // NULL milliseconds make a NULL expiry) and cleared with it.
  markTurnRunning: `
    UPDATE conversations
    SET running_turn_boot = $2, running_turn_since = $3,
        lease_owner = $4, lease_node = $5, lease_expires_at = now() + make_interval(secs => $6::double precision / 1000), lease_takeovers = 0
    WHERE id = $1`,
  clearTurnRunning: `
    UPDATE conversations
    SET running_turn_boot = NULL, running_turn_since = NULL,
        lease_owner = NULL, lease_node = NULL, lease_expires_at = NULL, lease_takeovers = 0
    WHERE id = $1 AND running_turn_boot IS NOT NULL`,
  // Marks of boots that are neither this one nor a live replica: turns a crash cut off. Marks
  // with a lease are not: orchestrators take them over.
  selectTurnsOfDeadBoots: `
    SELECT id FROM conversations
    WHERE running_turn_boot IS NOT NULL AND running_turn_boot <> $1 AND lease_owner IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM store_replicas
        WHERE boot_id = conversations.running_turn_boot AND last_seen > now() - make_interval(secs => $2::double precision / 1000)
      )`,

  // Runs with leases, on the database's clock. Renewing and releasing change only a
  // lease its owner holds on a running turn; a release never makes a lease last longer.
  renewRunLease: `
    UPDATE conversations SET lease_expires_at = now() + make_interval(secs => $3::double precision / 1000)
    WHERE id = $1 AND lease_owner = $2 AND running_turn_boot IS NOT NULL`,
  releaseRunLease: `
    UPDATE conversations SET lease_expires_at = least(lease_expires_at, now())
    WHERE id = $1 AND lease_owner = $2 AND running_turn_boot IS NOT NULL`,
  conversationExists: `SELECT 1 FROM conversations WHERE id = $1`,
  // One statement: the runs it may take ($1 owner, $2 node), oldest expiry first, through the
  // partial index of leased marks, locked FOR UPDATE SKIP LOCKED — a run another taker locked
  // is left to it, and one it took meanwhile is re-checked on its new version under READ
  // COMMITTED (its fresh lease has not expired, and is not this node's) — then moved to the
  // caller with a fresh lease ($3 ms), a live mark of this replica ($5) set now ($6), and one
  // more takeover. The caller's own leases only where it gave them up ($7). Returns the previous owner and expiry too, to answer in expiry order.
  takeOverRuns: `
    WITH candidates AS (
      SELECT id, lease_owner, lease_expires_at FROM conversations
      WHERE lease_owner IS NOT NULL AND running_turn_boot IS NOT NULL
        AND ((lease_owner <> $1 AND (lease_expires_at <= now() OR lease_node = $2))
          OR (lease_owner = $1 AND id = ANY($7::uuid[])))
      ORDER BY lease_expires_at, id
      LIMIT $4
      FOR UPDATE SKIP LOCKED
    )
    UPDATE conversations
    SET lease_owner = $1, lease_node = $2, lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
        lease_takeovers = conversations.lease_takeovers + 1, running_turn_boot = $5, running_turn_since = $6
    FROM candidates
    WHERE conversations.id = candidates.id
    RETURNING conversations.id, candidates.lease_owner AS previous_owner, candidates.lease_expires_at AS previous_expiry,
              conversations.lease_takeovers AS takeovers`,

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
