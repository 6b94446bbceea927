// Every statement of the store, written once as SQL text and compiled per database; where they differ, a fragment of
// the dialect says it (`DialectSql`). No SQL is ever built from input: every value is a named parameter (`@name`).

export type DialectName = 'sqlite' | 'postgres';

/** A query as run: its text and the name of each (PostgreSQL: positional) parameter. */
interface NamedQuery {
  readonly name: string;
  readonly sql: string;
  readonly parameters: readonly string[];
}

export type QueryArgs = Record<string, unknown>;

interface DialectSql {
  name: DialectName;
  /** Now, on the clock approvals expire by: SQLite the store's (ISO text), PostgreSQL the database's. */
  now(name: string): string;
  /** Now, on the clock leases expire by (SQLite: epoch ms; PostgreSQL: timestamptz). */
  leaseNow(name: string): string;
  /** Now plus the milliseconds of parameter `ttl`, on the lease clock; NULL when it is NULL. */
  leaseUntil(ttl: string, now?: string): string;
  /** A new approval's expires_at. */
  approvalExpiresAt: string;
  /** expires_at read as ISO text with milliseconds (rows.ts). */
  expiresAtText: string;
  inList(column: string, name: string, elementType: 'text' | 'uuid'): string;
  /** Whether a conversation's running mark belongs to another live store process (the caller's own is live anyway). */
  otherBootLive: string;
  /** Whether another live replica has watchers of the conversation. */
  watchedElsewhere: string;
  /** The column that keeps the insertion order of approvals that share created_at. */
  approvalOrder: 'rowid' | 'position';
  latestEventId: string;
  /** An approval's votes as a JSON array of text (NULL or '[]' without any), through approval_votes' key. */
  votesJson: string;
  /** One statement that inserts a write's steps, from parameter `steps` (a JSON array), numbered from `first_index`. */
  insertRunSteps: string;
}

const sqliteSql: DialectSql = {
  name: 'sqlite',
  now: (name) => `@${name}`,
  leaseNow: (name) => `@${name}`,
  leaseUntil: (ttl, now = 'now_ms') => `@${now} + @${ttl}`,
  approvalExpiresAt: '@expires_at',
  expiresAtText: 'expires_at',
  inList: (column, name) => `${column} IN (SELECT value FROM json_each(@${name}))`,
  // One process per file: a mark of another boot was left by a process that is gone.
  otherBootLive: '0',
  watchedElsewhere: '0',
  approvalOrder: 'rowid',
  latestEventId: '(SELECT coalesce(max(id), 0) FROM events)',
  votesJson: `(SELECT json_group_array(json_object('voter', voter, 'via', via, 'reason', reason, 'at', at, 'args_hash', args_hash))
    FROM approval_votes WHERE approval_votes.approval_uuid = approvals.uuid)`,
  insertRunSteps: `INSERT INTO run_steps (run_id, idx, kind, node, started_at, duration_ms, body, message_seq)
    SELECT @run_id, @first_index + key, json_extract(value, '$.kind'), json_extract(value, '$.node'),
      json_extract(value, '$.started_at'), json_extract(value, '$.duration_ms'), json_extract(value, '$.body'),
      json_extract(value, '$.message_seq')
    FROM json_each(@steps)`,
};

/** Milliseconds of a parameter as a PostgreSQL interval. */
const interval = (name: string) => `make_interval(secs => @${name}::double precision / 1000)`;

const postgresSql: DialectSql = {
  name: 'postgres',
  now: () => 'now()',
  leaseNow: () => 'now()',
  leaseUntil: (ttl) => `now() + ${interval(ttl)}`,
  approvalExpiresAt: `now() + ${interval('expires_in_ms')}`,
  expiresAtText: `to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  inList: (column, name, elementType) => `${column} = ANY(@${name}::${elementType}[])`,
  // A replica seen within its last heartbeats (store_replicas) is alive.
  otherBootLive: `EXISTS (
    SELECT 1 FROM store_replicas
    WHERE boot_id = conversations.running_turn_boot AND last_seen > now() - ${interval('live_for_ms')})`,
  watchedElsewhere: `EXISTS (
    SELECT 1 FROM store_watches JOIN store_replicas USING (boot_id)
    WHERE store_watches.conversation_id IN (conversations.id::text, '') AND store_watches.boot_id <> @boot
      AND store_replicas.last_seen > now() - ${interval('live_for_ms')})`,
  approvalOrder: 'position',
  latestEventId: '(SELECT last_id FROM event_ids)',
  votesJson: `(SELECT json_agg(json_build_object('voter', voter, 'via', via, 'reason', reason, 'at', at, 'args_hash', args_hash))::text
    FROM approval_votes WHERE approval_votes.approval_uuid = approvals.uuid)`,
  insertRunSteps: `INSERT INTO run_steps (run_id, idx, kind, node, started_at, duration_ms, body, message_seq)
    SELECT @run_id::uuid, @first_index::integer + (step.ord::integer - 1), step.value->>'kind', step.value->>'node',
      step.value->>'started_at', (step.value->>'duration_ms')::bigint, step.value->>'body', (step.value->>'message_seq')::integer
    FROM jsonb_array_elements(@steps::jsonb) WITH ORDINALITY AS step (value, ord)`,
};

/** `INSERT INTO table (columns) VALUES (@column, …)`, each column from the parameter of its name, then `more` values. */
const insert = (table: string, columns: string, more: Record<string, string> = {}) => {
  const names = columns.split(', ');
  const values = [...names.map((column) => `@${column}`), ...Object.values(more)];
  return `INSERT INTO ${table} (${[...names, ...Object.keys(more)].join(', ')}) VALUES (${values.join(', ')})`;
};

/** `column = @column, …`: each column set from the parameter of its name. */
const setNamed = (columns: string) =>
  columns
    .split(', ')
    .map((column) => `${column} = @${column}`)
    .join(', ');

function buildQueries(d: DialectSql) {
  const postgres = d.name === 'postgres';
  /** A conversation row with its run (a conversation whose run was never written: revision 0), in one statement. */
  const conversationWithRun = `SELECT conversations.*, runs.state AS run_state, runs.schema_version AS run_schema_version,
      coalesce(runs.revision, 0) AS run_revision, ${d.otherBootLive} AS running_turn_boot_live, ${d.watchedElsewhere} AS watched_elsewhere
    FROM conversations LEFT JOIN runs ON runs.conversation_id = conversations.id`;
  const newestFirst = 'ORDER BY conversations.created_at DESC, conversations.id DESC LIMIT @limit';
  const beforeCursor = '(conversations.created_at, conversations.id) < (@created_at, @id)';

  const approvalRow = `uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description, remote_task_id, remote_agent_name,
    status, created_at, decided_at, updated_at, agent_chain, reason, outcome_unknown, replaces_uuid, decided_by, via, edited_args,
    on_timeout, decision_id, quorum_required, quorum_role, quorum_not_requester, requested_by, escalates_at, escalation_role,
    escalated_at, ${d.expiresAtText} AS expires_at, ${d.votesJson} AS votes_json`;
  const approvals = `SELECT ${approvalRow} FROM approvals`;
  const afterApproval = '(created_at, uuid) > (@created_at, @uuid)';
  const pending = `${approvals} WHERE status = 'pending'`;
  const oldestApprovals = 'ORDER BY created_at, uuid LIMIT @limit';
  const messages = 'SELECT * FROM messages WHERE conversation_id = @conversation_id';
  const pushConfigs = 'SELECT * FROM push_configs WHERE conversation_id = @conversation_id';
  const eventsAfter = 'SELECT * FROM events WHERE id > @after_id';
  const newestRuns = 'SELECT * FROM run_journals WHERE conversation_id = @conversation_id';
  const runsNewestFirst = 'ORDER BY started_at DESC, run_id DESC LIMIT @limit';
  const newestAudit = 'SELECT * FROM audit WHERE id < @before';
  const auditNewestFirst = 'ORDER BY id DESC LIMIT @limit';
  const skipCursors = 'UPDATE webhook_cursors SET last_event_id = @through_id WHERE last_event_id < @through_id';
  /** Only a running turn's lease its owner holds. */
  const ownLease = 'WHERE id = @id AND lease_owner = @owner AND running_turn_boot IS NOT NULL';
  const moveApprovalTo = (status: string) => `UPDATE approvals SET status = ${status}, updated_at = @now WHERE uuid = @uuid`;

  return {
    insertConversation: insert('conversations', 'id, session_id, created_at, a2a_dialect, a2a_context_id, owner', {
      status: `'active'`,
      message_count: '0',
      updated_at: '@created_at',
    }),
    // Read to keep creation times strictly increasing; an index seek, not a scan.
    newestCreatedAt: 'SELECT created_at FROM conversations ORDER BY created_at DESC, id DESC LIMIT 1',
    // The lock every write of a conversation takes first where rows are locked (PostgreSQL).
    lockConversation: `SELECT id FROM conversations WHERE id = @id${postgres ? ' FOR UPDATE' : ''}`,
    selectConversation: `${conversationWithRun} WHERE conversations.id = @id`,
    // The whole mutable state at once, decided from the row read in the same transaction.
    updateConversation: `UPDATE conversations SET ${setNamed('status, pending_approval_uuid, message_count, updated_at, input_tokens, output_tokens')}
      WHERE id = @id`,
    firstPage: `${conversationWithRun} ${newestFirst}`,
    pageAfter: `${conversationWithRun} WHERE ${beforeCursor} ${newestFirst}`,
    // One owner's conversations: a walk of conversations_by_owner from the cursor.
    ownerFirstPage: `${conversationWithRun} WHERE conversations.owner = @owner ${newestFirst}`,
    ownerPageAfter: `${conversationWithRun} WHERE conversations.owner = @owner AND ${beforeCursor} ${newestFirst}`,
    // A change of the run: the new bytes, or NULLs to clear it, at the revision computed from the row read.
    writeRun: `${insert('runs', 'conversation_id, state, schema_version, revision, updated_at')}
      ON CONFLICT (conversation_id) DO UPDATE SET state = excluded.state, schema_version = excluded.schema_version,
        revision = excluded.revision, updated_at = excluded.updated_at`,
    selectCounts: 'SELECT status, count FROM conversation_counts',
    selectOwnerCounts: 'SELECT status, count FROM conversation_counts_by_owner WHERE owner = @owner',

    insertMessage: insert(
      'messages',
      'conversation_id, seq, id, role, content, tool_call, created_at, input_tokens, output_tokens, compaction, node',
    ),
    selectMessages: `${messages} ORDER BY seq`,
    // A page of history walks the primary key from the cursor's seq and stops at the limit.
    selectMessagesBefore: `${messages} AND seq < @seq ORDER BY seq DESC LIMIT @limit`,
    selectMessagesAfter: `${messages} AND seq > @seq ORDER BY seq LIMIT @limit`,
    selectMessagePosition: 'SELECT conversation_id, seq FROM messages WHERE id = @id',

    insertApproval: `${insert(
      'approvals',
      'uuid, conversation_id, tool_call_id, tool_name, tool_args, args_hash, description, remote_task_id, remote_agent_name, created_at, ' +
        'agent_chain, outcome_unknown, replaces_uuid, on_timeout, quorum_required, quorum_role, quorum_not_requester, requested_by, ' +
        'escalates_at, escalation_role',
      { status: `'pending'`, updated_at: '@created_at', expires_at: d.approvalExpiresAt },
    )} RETURNING ${d.expiresAtText} AS expires_at`,
    selectApproval: `${approvals} WHERE uuid = @uuid`,
    // A conversation's pending approvals, oldest first (insertion order among those created together).
    selectPendingApprovals: `${pending} AND conversation_id = @conversation_id ORDER BY created_at, ${d.approvalOrder}`,
    // The same for a whole page of conversations, in one query.
    selectPendingApprovalsOfConversations: `${pending} AND ${d.inList('conversation_id', 'ids', 'uuid')}
      ORDER BY conversation_id, created_at, ${d.approvalOrder}`,
    // Exactly once: only the update that still sees 'pending' wins; one on_time also needs expires_at not passed.
    claimApproval: `UPDATE approvals
      SET ${setNamed('status, decided_at, reason, decided_by, via, edited_args, decision_id')}, updated_at = @decided_at
      WHERE uuid = @uuid AND status = 'pending' AND (@on_time = 0 OR expires_at IS NULL OR expires_at > ${d.now('now')})
      RETURNING ${approvalRow}`,
    // A vote counts only while the approval is pending and on time (as a human's claim).
    approvalOpenForVote: `SELECT uuid FROM approvals
      WHERE uuid = @uuid AND status = 'pending' AND (expires_at IS NULL OR expires_at > ${d.now('now')})`,
    selectVote: 'SELECT * FROM approval_votes WHERE approval_uuid = @approval_uuid AND voter = @voter',
    insertVote: insert('approval_votes', 'approval_uuid, voter, via, reason, at, args_hash'),
    // An edit restarts the count: the votes for the arguments it replaces go.
    deleteVotes: 'DELETE FROM approval_votes WHERE approval_uuid = @approval_uuid',
    countVotes: 'SELECT count(*) AS n FROM approval_votes WHERE approval_uuid = @approval_uuid AND args_hash = @args_hash',
    editPendingArgs: `UPDATE approvals SET edited_args = @edited_args, updated_at = @now WHERE uuid = @uuid AND status = 'pending'`,
    moveApproval: `${moveApprovalTo('@to')} AND status = @from RETURNING ${approvalRow}`,
    interruptApproval: `${moveApprovalTo(`'interrupted'`)} AND status IN ('approved', 'executing') AND updated_at <= @unchanged_since
      RETURNING ${approvalRow}`,
    // UpdateRun's interrupted_approval: only an executing call of this conversation.
    interruptExecutingApproval: `${moveApprovalTo(`'interrupted'`)} AND conversation_id = @conversation_id AND status = 'executing'
      RETURNING ${approvalRow}`,
    // Keyset pages over the partial index of pending approvals, oldest first.
    pendingApprovalsFirstPage: `${pending} ${oldestApprovals}`,
    pendingApprovalsPageAfter: `${pending} AND ${afterApproval} ${oldestApprovals}`,
    selectUnfinishedApprovals: `${approvals} WHERE conversation_id = @conversation_id AND status IN ('approved', 'executing')
      ORDER BY created_at, uuid`,
    // ListApprovals after a cursor: one walk per status (merged by the caller), or one conversation's, through its index.
    approvalsOfStatusAfter: `${approvals} WHERE status = @status AND ${afterApproval} ${oldestApprovals}`,
    approvalsOfConversationAfter: `${approvals}
      WHERE conversation_id = @conversation_id AND ${d.inList('status', 'statuses', 'text')} AND ${afterApproval} ${oldestApprovals}`,
    // ListDueApprovals, through the partial index of pending approvals with an expiry (SQLite, which plans without
    // statistics, is told so: it would walk pending approvals by status).
    dueApprovals: `SELECT ${approvalRow} FROM approvals${postgres ? '' : ' INDEXED BY approvals_due'}
      WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ${d.now('now')} ORDER BY expires_at, uuid LIMIT @limit`,

    // Pending approvals due to escalate, through the partial index of those not escalated yet.
    dueEscalations: `${pending} AND escalates_at IS NOT NULL AND escalated_at IS NULL AND escalates_at <= @now
      ORDER BY escalates_at, uuid LIMIT @limit`,
    // An escalation happens once: only a pending approval not escalated yet is marked.
    markEscalated: `UPDATE approvals SET escalated_at = @now WHERE uuid = @uuid AND status = 'pending' AND escalated_at IS NULL
      RETURNING ${approvalRow}`,

    // The audit trail: appended, never changed; newest first, before an id.
    insertAudit: `${insert('audit', 'at, kind, actor, via, subject, detail_json')} RETURNING *`,
    auditBefore: `${newestAudit} ${auditNewestFirst}`,
    auditOfKindBefore: `${newestAudit} AND kind = @kind ${auditNewestFirst}`,

    // One statement a claim: a new cursor starts at the newest event; the lease is taken when free, expired, the caller's
    // own or an earlier boot's of its node. No row back: another holds it.
    claimWebhookCursor: `INSERT INTO webhook_cursors (endpoint, last_event_id, lease_owner, lease_node, lease_expires_at)
      VALUES (@endpoint, ${d.latestEventId}, @owner, @node, ${d.leaseUntil('ttl_ms')})
      ON CONFLICT (endpoint) DO UPDATE
        SET lease_owner = excluded.lease_owner, lease_node = excluded.lease_node, lease_expires_at = excluded.lease_expires_at
        WHERE webhook_cursors.lease_owner IS NULL OR webhook_cursors.lease_expires_at <= ${d.leaseNow('now_ms')}
          OR webhook_cursors.lease_owner = excluded.lease_owner OR webhook_cursors.lease_node = excluded.lease_node
      RETURNING last_event_id`,
    selectWebhookCursor: 'SELECT last_event_id FROM webhook_cursors WHERE endpoint = @endpoint',
    // Forward only, while the caller holds the lease.
    advanceWebhookCursor: `UPDATE webhook_cursors
      SET last_event_id = CASE WHEN last_event_id > @last_event_id THEN last_event_id ELSE @last_event_id END,
        lease_expires_at = ${d.leaseUntil('ttl_ms')}
      WHERE endpoint = @endpoint AND lease_owner = @owner`,

    // Catch-up reads, a page at a time: over every conversation, or one's through its index; of every kind, or of some
    // (a watch that asked for a few kinds: the others are neither read out nor decoded).
    selectEventsAfter: `${eventsAfter} ORDER BY id LIMIT @limit`,
    selectConversationEventsAfter: `${eventsAfter} AND conversation_id = @conversation_id ORDER BY id LIMIT @limit`,
    selectEventsOfKindsAfter: `${eventsAfter} AND ${d.inList('kind', 'kinds', 'text')} ORDER BY id LIMIT @limit`,
    selectConversationEventsOfKindsAfter: `${eventsAfter} AND conversation_id = @conversation_id AND ${d.inList('kind', 'kinds', 'text')}
      ORDER BY id LIMIT @limit`,
    latestEventId: `SELECT ${d.latestEventId} AS id`,

    upsertPushConfig: `${insert('push_configs', 'conversation_id, id, url, token, dialect, created_at')}
      ON CONFLICT (conversation_id, id) DO UPDATE SET url = excluded.url, token = excluded.token, dialect = excluded.dialect`,
    selectPushConfig: `${pushConfigs} AND id = @id`,
    selectPushConfigs: `${pushConfigs} ORDER BY created_at, id`,
    countPushConfigs: 'SELECT count(*) AS n FROM push_configs WHERE conversation_id = @conversation_id',
    // One seek of the primary key (conversation_id, id): SQLite answers 0 or 1, PostgreSQL a boolean.
    hasPushConfigs: 'SELECT EXISTS (SELECT 1 FROM push_configs WHERE conversation_id = @conversation_id) AS has',
    deletePushConfig: 'DELETE FROM push_configs WHERE conversation_id = @conversation_id AND id = @id',

    // Replaced with a `recorded` that only grows (the next AUTOINCREMENT key, or the next value of the serial).
    upsertHistoryDigest: `${postgres ? 'INSERT' : 'REPLACE'} INTO history_digests (conversation_id, owner_key, digest)
      VALUES (@conversation_id, @owner_key, @digest)${
        postgres ? ' ON CONFLICT (conversation_id) DO UPDATE SET digest = excluded.digest, recorded = excluded.recorded' : ''
      }`,
    // One seek of history_digests_by_digest.
    selectConversationByHistory: `SELECT conversation_id AS id FROM history_digests WHERE digest = @digest AND owner_key = @owner_key
      ORDER BY recorded DESC LIMIT 1`,

    // Data lifecycle. A deleted conversation's row goes last: its messages, approvals (and votes), run, push configs and
    // history digest go with it (ON DELETE CASCADE); its events have no key to it and go by their index.
    deleteConversationEvents: 'DELETE FROM events WHERE conversation_id = @conversation_id',
    deleteConversation: 'DELETE FROM conversations WHERE id = @id',
    // Retention: the least recently changed first, through conversations_idle.
    idleConversations: 'SELECT id FROM conversations WHERE updated_at < @before ORDER BY updated_at, id LIMIT @limit',
    // The head of the log, oldest id first (a seek of the key from the first id, never a scan): a prune removes a prefix of it.
    oldestEvents: 'SELECT id, created_at FROM events WHERE id > 0 ORDER BY id LIMIT @limit',
    deleteEventsThrough: 'DELETE FROM events WHERE id <= @through_id',
    // The consumers of the outbox that have not passed an event: webhook and push cursors, and (PostgreSQL with NATS) the
    // publication to each stream.
    consumersBehind: `SELECT endpoint AS name, last_event_id FROM webhook_cursors WHERE last_event_id < @through_id${
      postgres
        ? `
      UNION ALL SELECT 'nats:' || stream AS name, last_id AS last_event_id FROM event_publications WHERE last_id < @through_id`
        : ''
    }`,
    skipCursorsTo: skipCursors,
    // SQLite has no NATS publications: there, the cursors' statement again, which finds none behind any more.
    skipPublicationsTo: postgres ? 'UPDATE event_publications SET last_id = @through_id WHERE last_id < @through_id' : skipCursors,
    // A piece of background work's lease: taken when free, expired or the caller's own (one statement).
    claimBackgroundLease: `INSERT INTO background_leases (name, owner, node, expires_at) VALUES (@name, @owner, @node, ${d.leaseUntil('ttl_ms')})
      ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, node = excluded.node, expires_at = excluded.expires_at
        WHERE background_leases.expires_at <= ${d.leaseNow('now_ms')} OR background_leases.owner = excluded.owner
      RETURNING owner`,
    // Audit retention: the only deletion of audit entries, of those older than the horizon set in the same transaction.
    oldestAudit: 'SELECT id, at AS created_at FROM audit WHERE id > 0 ORDER BY id LIMIT @limit',
    setAuditHorizon: 'UPDATE audit_horizon SET before = @before',
    deleteAuditThrough: 'DELETE FROM audit WHERE id <= @through_id',

    // The running-turn mark changes nothing a reader sees (apart from updateConversation); its lease goes with it.
    markTurnRunning: `UPDATE conversations SET lease_owner = @lease_owner, lease_node = @lease_node, running_turn_boot = @boot,
        running_turn_since = @since, lease_expires_at = ${d.leaseUntil('lease_ttl_ms')}, lease_takeovers = 0
      WHERE id = @id`,
    clearTurnRunning: `UPDATE conversations SET running_turn_boot = NULL, running_turn_since = NULL, lease_owner = NULL,
        lease_node = NULL, lease_expires_at = NULL, lease_takeovers = 0
      WHERE id = @id AND running_turn_boot IS NOT NULL`,
    // Through the partial index of marks: those of dead boots without a lease (orchestrators take those over).
    selectTurnsOfDeadBoots: `SELECT id FROM conversations
      WHERE running_turn_boot IS NOT NULL AND running_turn_boot <> @boot AND lease_owner IS NULL AND NOT ${d.otherBootLive}`,

    // The run journal: a write's run row is made or moved on (its step count is the next step's index), then its steps
    // go in with one statement.
    // The run's user message: the conversation's latest when its first step is written (a later write keeps it).
    upsertRunJournal: `${insert('run_journals', 'run_id, conversation_id, journal_version, status, started_at, ended_at, step_count', {
      message_seq: "(SELECT seq FROM messages WHERE conversation_id = @conversation_id AND role = 'user' ORDER BY seq DESC LIMIT 1)",
    })}
      ON CONFLICT (run_id) DO UPDATE
        SET status = excluded.status, ended_at = excluded.ended_at, step_count = run_journals.step_count + excluded.step_count
      RETURNING conversation_id, step_count`,
    insertRunSteps: d.insertRunSteps,
    runsOfConversationFirstPage: `${newestRuns} ${runsNewestFirst}`,
    runsOfConversationPageAfter: `${newestRuns} AND (started_at, run_id) < (@started_at, @run_id) ${runsNewestFirst}`,
    selectRunJournal: 'SELECT * FROM run_journals WHERE run_id = @run_id',
    selectRunSteps: 'SELECT * FROM run_steps WHERE run_id = @run_id ORDER BY idx',
    // Journal retention: the runs that ended before `before`, the earliest first through run_journals_ended, at most
    // `limit`; their steps go with them (ON DELETE CASCADE). A run not ended has no ended_at: never one of them.
    deleteEndedRuns: `DELETE FROM run_journals WHERE run_id IN (
      SELECT run_id FROM run_journals
      WHERE ended_at IS NOT NULL AND ended_at < @before AND status IN ('completed', 'cancelled', 'interrupted')
      ORDER BY ended_at, run_id LIMIT @limit)
      RETURNING step_count`,

    // Only a lease its owner holds on a running turn; a release never makes it last longer.
    renewRunLease: `UPDATE conversations SET lease_expires_at = ${d.leaseUntil('ttl_ms')} ${ownLease}`,
    releaseRunLease: `UPDATE conversations
      SET lease_expires_at = CASE WHEN lease_expires_at < ${d.leaseNow('now_ms')} THEN lease_expires_at ELSE ${d.leaseNow('now_ms')} END
      ${ownLease}`,
    // Oldest expiry first over the leased marks: expired, an earlier boot's of the taker's node, its own given up.
    // PostgreSQL skips rows another taker locked: each run goes to one.
    selectTakeoverCandidates: `SELECT id, lease_owner FROM conversations
      WHERE lease_owner IS NOT NULL AND running_turn_boot IS NOT NULL
        AND ((lease_owner <> @owner AND (lease_expires_at <= ${d.leaseNow('now')} OR lease_node = @node))
          OR (lease_owner = @owner AND ${d.inList('id', 'given_up', 'uuid')}))
      ORDER BY lease_expires_at, id LIMIT @limit${postgres ? ' FOR UPDATE SKIP LOCKED' : ''}`,
    // The taken mark is fresh and the taker's: the run goes on as a running turn of its store.
    takeOverRun: `UPDATE conversations SET lease_owner = @owner, lease_node = @node, lease_expires_at = ${d.leaseUntil('ttl_ms', 'now')},
        lease_takeovers = lease_takeovers + 1, running_turn_boot = @boot, running_turn_since = @since
      WHERE id = @id RETURNING lease_takeovers`,
  };
}

export type QueryName = keyof ReturnType<typeof buildQueries>;
export type StoreQueries = Record<QueryName, NamedQuery>;

/** Each query's parameters in order; PostgreSQL's text numbers them ($1, $2, …), SQLite's keeps their names. */
function compileQueries(dialect: DialectSql): StoreQueries {
  const compiled = {} as StoreQueries;
  for (const [name, text] of Object.entries(buildQueries(dialect)) as [QueryName, string][]) {
    const parameters: string[] = [];
    const sql = text.replace(/@(\w+)/g, (named, parameter: string) => {
      parameters.push(parameter);
      return dialect.name === 'postgres' ? `$${parameters.length}` : named;
    });
    compiled[name] = { name, sql, parameters };
  }
  return compiled;
}

/** The store's statements compiled for one database; each a constant, built once per process. */
export const QUERIES: Record<DialectName, StoreQueries> = { sqlite: compileQueries(sqliteSql), postgres: compileQueries(postgresSql) };
