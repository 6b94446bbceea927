import { type RawBuilder, sql } from 'kysely';
import { compileQueries, type DialectName, fixed, lit, type NamedQuery, type Param, param, queryBuilder } from './named-query.js';

// Every statement of the store, written once with Kysely and compiled per database; where they differ, a fragment of
// the dialect says it (`DialectSql`). No SQL is ever built from input: every value is a named parameter.

interface DialectSql {
  name: DialectName;
  /** Now, on the clock approvals expire by: SQLite the store's (ISO text), PostgreSQL the database's. */
  now(name: string): RawBuilder<never>;
  /** Now, on the clock leases expire by (SQLite: epoch ms; PostgreSQL: timestamptz). */
  leaseNow(name: string): RawBuilder<never>;
  /** Now plus the milliseconds of parameter `ttl`, on the lease clock; NULL when it is NULL. */
  leaseUntil(ttl: string, now?: string): RawBuilder<never>;
  /** A new approval's expires_at. */
  approvalExpiresAt: RawBuilder<never>;
  /** expires_at read as ISO text with milliseconds (rows.ts). */
  expiresAtText: RawBuilder<never>;
  inList(column: string, name: string, elementType: 'text' | 'uuid'): RawBuilder<boolean>;
  /** Whether a conversation's running mark belongs to another live store process (the caller's own is live anyway). */
  otherBootLive: RawBuilder<never>;
  /** Whether another live replica has watchers of the conversation. */
  watchedElsewhere: RawBuilder<never>;
  /** The column that keeps the insertion order of approvals that share created_at. */
  approvalOrder: 'rowid' | 'position';
  latestEventId: RawBuilder<never>;
  /** An approval's votes as a JSON array of text (NULL or '[]' without any), through approval_votes' key. */
  votesJson: RawBuilder<never>;
  /** One statement that inserts a write's steps, from parameter `steps` (a JSON array), numbered from `first_index`. */
  insertRunSteps: RawBuilder<never>;
}

const sqliteSql: DialectSql = {
  name: 'sqlite',
  now: (name) => sql<never>`${param(name)}`,
  leaseNow: (name) => sql<never>`${param(name)}`,
  leaseUntil: (ttl, now = 'now_ms') => sql<never>`${param(now)} + ${param(ttl)}`,
  approvalExpiresAt: sql<never>`${param('expires_at')}`,
  expiresAtText: fixed('expires_at'),
  inList: (column, name) => sql<boolean>`${sql.ref(column)} IN (SELECT value FROM json_each(${param(name)}))`,
  // One process per file: a mark of another boot was left by a process that is gone.
  otherBootLive: fixed('0'),
  watchedElsewhere: fixed('0'),
  approvalOrder: 'rowid',
  latestEventId: fixed('(SELECT coalesce(max(id), 0) FROM events)'),
  votesJson: fixed(`(SELECT json_group_array(json_object('voter', voter, 'via', via, 'reason', reason, 'at', at, 'args_hash', args_hash))
    FROM approval_votes WHERE approval_votes.approval_uuid = approvals.uuid)`),
  insertRunSteps: sql<never>`INSERT INTO run_steps (run_id, idx, kind, node, started_at, duration_ms, body, message_seq)
    SELECT ${param('run_id')}, ${param('first_index')} + key, json_extract(value, '$.kind'), json_extract(value, '$.node'),
      json_extract(value, '$.started_at'), json_extract(value, '$.duration_ms'), json_extract(value, '$.body'),
      json_extract(value, '$.message_seq')
    FROM json_each(${param('steps')})`,
};

const postgresSql: DialectSql = {
  name: 'postgres',
  now: () => fixed('now()'),
  leaseNow: () => fixed('now()'),
  leaseUntil: (ttl) => sql<never>`now() + make_interval(secs => ${param(ttl)}::double precision / 1000)`,
  approvalExpiresAt: sql<never>`now() + make_interval(secs => ${param('expires_in_ms')}::double precision / 1000)`,
  expiresAtText: fixed(`to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`),
  inList: (column, name, elementType) => sql<boolean>`${sql.ref(column)} = ANY(${param(name)}::${sql.raw(elementType)}[])`,
  // A replica seen within its last heartbeats (store_replicas) is alive.
  otherBootLive: sql<never>`EXISTS (
    SELECT 1 FROM store_replicas
    WHERE boot_id = conversations.running_turn_boot AND last_seen > now() - make_interval(secs => ${param('live_for_ms')}::double precision / 1000))`,
  watchedElsewhere: sql<never>`EXISTS (
    SELECT 1 FROM store_watches JOIN store_replicas USING (boot_id)
    WHERE store_watches.conversation_id IN (conversations.id::text, '') AND store_watches.boot_id <> ${param('boot')}
      AND store_replicas.last_seen > now() - make_interval(secs => ${param('live_for_ms')}::double precision / 1000))`,
  approvalOrder: 'position',
  latestEventId: fixed('(SELECT last_id FROM event_ids)'),
  votesJson:
    fixed(`(SELECT json_agg(json_build_object('voter', voter, 'via', via, 'reason', reason, 'at', at, 'args_hash', args_hash))::text
    FROM approval_votes WHERE approval_votes.approval_uuid = approvals.uuid)`),
  insertRunSteps: sql<never>`INSERT INTO run_steps (run_id, idx, kind, node, started_at, duration_ms, body, message_seq)
    SELECT ${param('run_id')}::uuid, ${param('first_index')}::integer + (step.ord::integer - 1), step.value->>'kind', step.value->>'node',
      step.value->>'started_at', (step.value->>'duration_ms')::bigint, step.value->>'body', (step.value->>'message_seq')::integer
    FROM jsonb_array_elements(${param('steps')}::jsonb) WITH ORDINALITY AS step (value, ord)`,
};

function buildQueries(d: DialectSql) {
  const db = queryBuilder(d.name);
  const p = param;
  /** Each column set from the parameter of its name. */
  const named = <C extends string>(...columns: C[]) =>
    Object.fromEntries(columns.map((column) => [column, p(column)])) as Record<C, Param<never>>;

  /** A conversation row with its run (a conversation whose run was never written: revision 0), in one statement. */
  const conversationWithRun = db
    .selectFrom('conversations')
    .leftJoin('runs', 'runs.conversation_id', 'conversations.id')
    .selectAll('conversations')
    .select([
      'runs.state as run_state',
      'runs.schema_version as run_schema_version',
      fixed('coalesce(runs.revision, 0)').as('run_revision'),
      d.otherBootLive.as('running_turn_boot_live'),
      d.watchedElsewhere.as('watched_elsewhere'),
    ]);
  const newestFirst = conversationWithRun.orderBy('conversations.created_at', 'desc').orderBy('conversations.id', 'desc').limit(p('limit'));
  const beforeCursor = sql<boolean>`(conversations.created_at, conversations.id) < (${p('created_at')}, ${p('id')})`;

  const approvalColumns = [
    'uuid',
    'conversation_id',
    'tool_call_id',
    'tool_name',
    'tool_args',
    'args_hash',
    'description',
    'remote_task_id',
    'remote_agent_name',
    'status',
    'created_at',
    'decided_at',
    'updated_at',
    'agent_chain',
    'reason',
    'outcome_unknown',
    'replaces_uuid',
    'decided_by',
    'via',
    'edited_args',
    'on_timeout',
    'decision_id',
    'quorum_required',
    'quorum_role',
    'quorum_not_requester',
    'requested_by',
    'escalates_at',
    'escalation_role',
    'escalated_at',
  ] as const;
  const approvalRow = [...approvalColumns, d.expiresAtText.as('expires_at'), d.votesJson.as('votes_json')] as const;
  const approvals = db.selectFrom('approvals').select(approvalRow);
  const afterApproval = sql<boolean>`(created_at, uuid) > (${p('created_at')}, ${p('uuid')})`;
  const pending = approvals.where('status', '=', lit('pending'));
  const messages = db.selectFrom('messages').selectAll().where('conversation_id', '=', p('conversation_id'));
  const pushConfigs = db.selectFrom('push_configs').selectAll().where('conversation_id', '=', p('conversation_id'));
  const eventsAfter = db.selectFrom('events').selectAll().where('id', '>', p('after_id')).orderBy('id').limit(p('limit'));
  const skipCursors = db
    .updateTable('webhook_cursors')
    .set({ last_event_id: p('through_id') })
    .where('last_event_id', '<', p('through_id'));
  const newestRuns = db
    .selectFrom('run_journals')
    .selectAll()
    .where('conversation_id', '=', p('conversation_id'))
    .orderBy('started_at', 'desc')
    .orderBy('run_id', 'desc')
    .limit(p('limit'));
  const newestAudit = db.selectFrom('audit').selectAll().where('id', '<', p('before')).orderBy('id', 'desc').limit(p('limit'));

  return {
    insertConversation: db.insertInto('conversations').values({
      ...named('id', 'session_id', 'created_at', 'a2a_dialect', 'a2a_context_id', 'owner'),
      status: lit('active'),
      message_count: lit(0),
      updated_at: p('created_at'),
    }),
    // Read to keep creation times strictly increasing; an index seek, not a scan.
    newestCreatedAt: db.selectFrom('conversations').select('created_at').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(lit(1)),
    // The lock every write of a conversation takes first where rows are locked (PostgreSQL).
    lockConversation: db
      .selectFrom('conversations')
      .select('id')
      .where('id', '=', p('id'))
      .$if(d.name === 'postgres', (query) => query.forUpdate()),
    selectConversation: conversationWithRun.where('conversations.id', '=', p('id')),
    conversationExists: db.selectFrom('conversations').select('id').where('id', '=', p('id')),
    // The whole mutable state at once, decided from the row read in the same transaction.
    updateConversation: db
      .updateTable('conversations')
      .set(named('status', 'pending_approval_uuid', 'message_count', 'updated_at', 'input_tokens', 'output_tokens'))
      .where('id', '=', p('id')),
    firstPage: newestFirst,
    pageAfter: newestFirst.where(beforeCursor),
    // One owner's conversations: a walk of conversations_by_owner from the cursor.
    ownerFirstPage: newestFirst.where('conversations.owner', '=', p('owner')),
    ownerPageAfter: newestFirst.where('conversations.owner', '=', p('owner')).where(beforeCursor),
    // A change of the run: the new bytes, or NULLs to clear it, at the revision computed from the row read.
    writeRun: db
      .insertInto('runs')
      .values(named('conversation_id', 'state', 'schema_version', 'revision', 'updated_at'))
      .onConflict((conflict) =>
        conflict.column('conversation_id').doUpdateSet({
          state: (eb) => eb.ref('excluded.state'),
          schema_version: (eb) => eb.ref('excluded.schema_version'),
          revision: (eb) => eb.ref('excluded.revision'),
          updated_at: (eb) => eb.ref('excluded.updated_at'),
        }),
      ),
    selectCounts: db.selectFrom('conversation_counts').select(['status', 'count']),
    selectOwnerCounts: db.selectFrom('conversation_counts_by_owner').select(['status', 'count']).where('owner', '=', p('owner')),

    insertMessage: db.insertInto('messages').values({
      ...named('conversation_id', 'seq', 'id', 'role', 'content', 'tool_call', 'created_at'),
      ...named('input_tokens', 'output_tokens', 'compaction', 'node'),
    }),
    selectMessages: messages.orderBy('seq'),
    // A page of history walks the primary key from the cursor's seq and stops at the limit.
    selectMessagesBefore: messages.where('seq', '<', p('seq')).orderBy('seq', 'desc').limit(p('limit')),
    selectMessagesAfter: messages.where('seq', '>', p('seq')).orderBy('seq').limit(p('limit')),
    selectMessagePosition: db.selectFrom('messages').select(['conversation_id', 'seq']).where('id', '=', p('id')),

    insertApproval: db
      .insertInto('approvals')
      .values({
        ...named('uuid', 'conversation_id', 'tool_call_id', 'tool_name', 'tool_args', 'args_hash', 'description', 'remote_task_id'),
        ...named('remote_agent_name', 'created_at', 'agent_chain', 'outcome_unknown', 'replaces_uuid', 'on_timeout'),
        ...named('quorum_required', 'quorum_role', 'quorum_not_requester', 'requested_by', 'escalates_at', 'escalation_role'),
        status: lit('pending'),
        updated_at: p('created_at'),
        expires_at: d.approvalExpiresAt,
      })
      .returning(d.expiresAtText.as('expires_at')),
    selectApproval: approvals.where('uuid', '=', p('uuid')),
    // A conversation's pending approvals, oldest first (insertion order among those created together).
    selectPendingApprovals: pending.where('conversation_id', '=', p('conversation_id')).orderBy('created_at').orderBy(d.approvalOrder),
    // The same for a whole page of conversations, in one query.
    selectPendingApprovalsOfConversations: pending
      .where(d.inList('conversation_id', 'ids', 'uuid'))
      .orderBy('conversation_id')
      .orderBy('created_at')
      .orderBy(d.approvalOrder),
    // Exactly once: only the update that still sees 'pending' wins; one on_time also needs expires_at not passed.
    claimApproval: db
      .updateTable('approvals')
      .set({ ...named('status', 'decided_at', 'reason', 'decided_by', 'via', 'edited_args', 'decision_id'), updated_at: p('decided_at') })
      .where('uuid', '=', p('uuid'))
      .where('status', '=', lit('pending'))
      .where(sql<boolean>`(${p('on_time')} = 0 OR expires_at IS NULL OR expires_at > ${d.now('now')})`)
      .returning(approvalRow),
    // A vote counts only while the approval is pending and on time (as a human's claim).
    approvalOpenForVote: db
      .selectFrom('approvals')
      .select('uuid')
      .where('uuid', '=', p('uuid'))
      .where('status', '=', lit('pending'))
      .where(sql<boolean>`(expires_at IS NULL OR expires_at > ${d.now('now')})`),
    selectVote: db.selectFrom('approval_votes').selectAll().where('approval_uuid', '=', p('approval_uuid')).where('voter', '=', p('voter')),
    insertVote: db.insertInto('approval_votes').values(named('approval_uuid', 'voter', 'via', 'reason', 'at', 'args_hash')),
    // An edit restarts the count: the votes for the arguments it replaces go.
    deleteVotes: db.deleteFrom('approval_votes').where('approval_uuid', '=', p('approval_uuid')),
    countVotes: db
      .selectFrom('approval_votes')
      .select(fixed('count(*)').as('n'))
      .where('approval_uuid', '=', p('approval_uuid'))
      .where('args_hash', '=', p('args_hash')),
    editPendingArgs: db
      .updateTable('approvals')
      .set({ edited_args: p('edited_args'), updated_at: p('now') })
      .where('uuid', '=', p('uuid'))
      .where('status', '=', lit('pending')),
    moveApproval: db
      .updateTable('approvals')
      .set({ status: p('to'), updated_at: p('now') })
      .where('uuid', '=', p('uuid'))
      .where('status', '=', p('from'))
      .returning(approvalRow),
    interruptApproval: db
      .updateTable('approvals')
      .set({ status: lit('interrupted'), updated_at: p('now') })
      .where('uuid', '=', p('uuid'))
      .where('status', 'in', [lit('approved'), lit('executing')])
      .where('updated_at', '<=', p('unchanged_since'))
      .returning(approvalRow),
    // UpdateRun's interrupted_approval: only an executing call of this conversation.
    interruptExecutingApproval: db
      .updateTable('approvals')
      .set({ status: lit('interrupted'), updated_at: p('now') })
      .where('uuid', '=', p('uuid'))
      .where('conversation_id', '=', p('conversation_id'))
      .where('status', '=', lit('executing'))
      .returning(approvalRow),
    // Keyset pages over the partial index of pending approvals, oldest first.
    pendingApprovalsFirstPage: pending.orderBy('created_at').orderBy('uuid').limit(p('limit')),
    pendingApprovalsPageAfter: pending.where(afterApproval).orderBy('created_at').orderBy('uuid').limit(p('limit')),
    selectUnfinishedApprovals: approvals
      .where('conversation_id', '=', p('conversation_id'))
      .where('status', 'in', [lit('approved'), lit('executing')])
      .orderBy('created_at')
      .orderBy('uuid'),
    // ListApprovals after a cursor: one walk per status (merged by the caller), or one conversation's, through its index.
    approvalsOfStatusAfter: approvals
      .where('status', '=', p('status'))
      .where(afterApproval)
      .orderBy('created_at')
      .orderBy('uuid')
      .limit(p('limit')),
    approvalsOfConversationAfter: approvals
      .where('conversation_id', '=', p('conversation_id'))
      .where(d.inList('status', 'statuses', 'text'))
      .where(afterApproval)
      .orderBy('created_at')
      .orderBy('uuid')
      .limit(p('limit')),
    // ListDueApprovals, through the partial index of pending approvals with an expiry.
    dueApprovals: pending
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', d.now('now'))
      .orderBy('expires_at')
      .orderBy('uuid')
      .limit(p('limit')),

    // Pending approvals due to escalate, through the partial index of those not escalated yet.
    dueEscalations: pending
      .where('escalates_at', 'is not', null)
      .where('escalated_at', 'is', null)
      .where('escalates_at', '<=', p('now'))
      .orderBy('escalates_at')
      .orderBy('uuid')
      .limit(p('limit')),
    // An escalation happens once: only a pending approval not escalated yet is marked.
    markEscalated: db
      .updateTable('approvals')
      .set({ escalated_at: p('now') })
      .where('uuid', '=', p('uuid'))
      .where('status', '=', lit('pending'))
      .where('escalated_at', 'is', null)
      .returning(approvalRow),

    // The audit trail: appended, never changed; newest first, before an id.
    insertAudit: db
      .insertInto('audit')
      .values(named('at', 'kind', 'actor', 'via', 'subject', 'detail_json'))
      .returningAll(),
    auditBefore: newestAudit,
    auditOfKindBefore: newestAudit.where('kind', '=', p('kind')),

    // One statement a claim: a new cursor starts at the newest event; the lease is taken when free, expired, the caller's
    // own or an earlier boot's of its node. No row back: another holds it.
    claimWebhookCursor: db
      .insertInto('webhook_cursors')
      .values({
        endpoint: p('endpoint'),
        last_event_id: d.latestEventId,
        lease_owner: p('owner'),
        lease_node: p('node'),
        lease_expires_at: d.leaseUntil('ttl_ms'),
      })
      .onConflict((conflict) =>
        conflict
          .column('endpoint')
          .doUpdateSet({
            lease_owner: (eb) => eb.ref('excluded.lease_owner'),
            lease_node: (eb) => eb.ref('excluded.lease_node'),
            lease_expires_at: fixed('excluded.lease_expires_at'),
          })
          .where(
            sql<boolean>`webhook_cursors.lease_owner IS NULL OR webhook_cursors.lease_expires_at <= ${d.leaseNow('now_ms')}
              OR webhook_cursors.lease_owner = excluded.lease_owner OR webhook_cursors.lease_node = excluded.lease_node`,
          ),
      )
      .returning('last_event_id'),
    selectWebhookCursor: db.selectFrom('webhook_cursors').select('last_event_id').where('endpoint', '=', p('endpoint')),
    // Forward only, while the caller holds the lease.
    advanceWebhookCursor: db
      .updateTable('webhook_cursors')
      .set({
        last_event_id: sql<never>`CASE WHEN last_event_id > ${p('last_event_id')} THEN last_event_id ELSE ${p('last_event_id')} END`,
        lease_expires_at: d.leaseUntil('ttl_ms'),
      })
      .where('endpoint', '=', p('endpoint'))
      .where('lease_owner', '=', p('owner')),

    // Catch-up reads, a page at a time: over every conversation, or one's through its index.
    selectEventsAfter: eventsAfter,
    selectConversationEventsAfter: eventsAfter.where('conversation_id', '=', p('conversation_id')),
    latestEventId: db.selectNoFrom(d.latestEventId.as('id')),

    upsertPushConfig: db
      .insertInto('push_configs')
      .values(named('conversation_id', 'id', 'url', 'token', 'dialect', 'created_at'))
      .onConflict((conflict) =>
        conflict.columns(['conversation_id', 'id']).doUpdateSet({
          url: (eb) => eb.ref('excluded.url'),
          token: (eb) => eb.ref('excluded.token'),
          dialect: (eb) => eb.ref('excluded.dialect'),
        }),
      ),
    selectPushConfig: pushConfigs.where('id', '=', p('id')),
    selectPushConfigs: pushConfigs.orderBy('created_at').orderBy('id'),
    countPushConfigs: db
      .selectFrom('push_configs')
      .select(sql<number>`count(*)`.as('n'))
      .where('conversation_id', '=', p('conversation_id')),
    deletePushConfig: db.deleteFrom('push_configs').where('conversation_id', '=', p('conversation_id')).where('id', '=', p('id')),

    // Replaced with a `recorded` that only grows (the next AUTOINCREMENT key, or the next value of the serial).
    upsertHistoryDigest:
      d.name === 'sqlite'
        ? db.replaceInto('history_digests').values(named('conversation_id', 'owner_key', 'digest'))
        : db
            .insertInto('history_digests')
            .values(named('conversation_id', 'owner_key', 'digest'))
            .onConflict((conflict) =>
              conflict.column('conversation_id').doUpdateSet({
                digest: (eb) => eb.ref('excluded.digest'),
                recorded: (eb) => eb.ref('excluded.recorded'),
              }),
            ),
    // One seek of history_digests_by_digest.
    selectConversationByHistory: db
      .selectFrom('history_digests')
      .select('conversation_id as id')
      .where('digest', '=', p('digest'))
      .where('owner_key', '=', p('owner_key'))
      .orderBy('recorded', 'desc')
      .limit(lit(1)),

    // Data lifecycle. A deleted conversation's row goes last: its messages, approvals (and votes), run, push configs and
    // history digest go with it (ON DELETE CASCADE); its events have no key to it and go by their index.
    deleteConversationEvents: db.deleteFrom('events').where('conversation_id', '=', p('conversation_id')),
    deleteConversation: db.deleteFrom('conversations').where('id', '=', p('id')),
    // Retention: the least recently changed first, through conversations_idle.
    idleConversations: db
      .selectFrom('conversations')
      .select('id')
      .where('updated_at', '<', p('before'))
      .orderBy('updated_at')
      .orderBy('id')
      .limit(p('limit')),
    // The head of the log, oldest id first (a seek of the key from the first id, never a scan): a prune removes a prefix of it.
    oldestEvents: db.selectFrom('events').select(['id', 'created_at']).where('id', '>', lit(0)).orderBy('id').limit(p('limit')),
    deleteEventsThrough: db.deleteFrom('events').where('id', '<=', p('through_id')),
    // The consumers of the outbox that have not passed an event: webhook and push cursors, and (PostgreSQL with NATS) the
    // publication to each stream.
    consumersBehind: db
      .selectFrom('webhook_cursors')
      .select(['endpoint as name', 'last_event_id'])
      .where('last_event_id', '<', p('through_id'))
      .$if(d.name === 'postgres', (query) =>
        query.unionAll(
          db
            .selectFrom('event_publications')
            .select([sql<string>`'nats:' || stream`.as('name'), 'last_id as last_event_id'])
            .where('last_id', '<', p('through_id')),
        ),
      ),
    skipCursorsTo: skipCursors,
    // SQLite has no NATS publications: there, the cursors' statement again, which finds none behind any more.
    skipPublicationsTo:
      d.name === 'postgres'
        ? db
            .updateTable('event_publications')
            .set({ last_id: p('through_id') })
            .where('last_id', '<', p('through_id'))
        : skipCursors,
    // A piece of background work's lease: taken when free, expired or the caller's own (one statement).
    claimBackgroundLease: db
      .insertInto('background_leases')
      .values({ name: p('name'), owner: p('owner'), node: p('node'), expires_at: d.leaseUntil('ttl_ms') })
      .onConflict((conflict) =>
        conflict
          .column('name')
          .doUpdateSet({
            owner: (eb) => eb.ref('excluded.owner'),
            node: (eb) => eb.ref('excluded.node'),
            expires_at: fixed('excluded.expires_at'),
          })
          .where(sql<boolean>`background_leases.expires_at <= ${d.leaseNow('now_ms')} OR background_leases.owner = excluded.owner`),
      )
      .returning('owner'),
    // Audit retention: the only deletion of audit entries, of those older than the horizon set in the same transaction.
    oldestAudit: db.selectFrom('audit').select(['id', 'at as created_at']).where('id', '>', lit(0)).orderBy('id').limit(p('limit')),
    setAuditHorizon: db.updateTable('audit_horizon').set({ before: p('before') }),
    deleteAuditThrough: db.deleteFrom('audit').where('id', '<=', p('through_id')),

    // The running-turn mark changes nothing a reader sees (apart from updateConversation); its lease goes with it.
    markTurnRunning: db
      .updateTable('conversations')
      .set({
        ...named('lease_owner', 'lease_node'),
        running_turn_boot: p('boot'),
        running_turn_since: p('since'),
        lease_expires_at: d.leaseUntil('lease_ttl_ms'),
        lease_takeovers: lit(0),
      })
      .where('id', '=', p('id')),
    clearTurnRunning: db
      .updateTable('conversations')
      .set({
        running_turn_boot: null,
        running_turn_since: null,
        lease_owner: null,
        lease_node: null,
        lease_expires_at: null,
        lease_takeovers: lit(0),
      })
      .where('id', '=', p('id'))
      .where('running_turn_boot', 'is not', null),
    // Through the partial index of marks: those of dead boots without a lease (orchestrators take those over).
    selectTurnsOfDeadBoots: db
      .selectFrom('conversations')
      .select('id')
      .where('running_turn_boot', 'is not', null)
      .where('running_turn_boot', '<>', p('boot'))
      .where('lease_owner', 'is', null)
      .where(sql<boolean>`NOT ${d.otherBootLive}`),

    // The run journal: a write's run row is made or moved on (its step count is the next step's index), then its steps
    // go in with one statement.
    upsertRunJournal: db
      .insertInto('run_journals')
      .values({
        ...named('run_id', 'conversation_id', 'journal_version', 'status', 'started_at', 'ended_at', 'step_count'),
        // The run's user message: the conversation's latest when its first step is written (a later write keeps it).
        message_seq: sql<never>`(SELECT seq FROM messages WHERE conversation_id = ${p('conversation_id')} AND role = 'user'
          ORDER BY seq DESC LIMIT 1)`,
      })
      .onConflict((conflict) =>
        conflict.column('run_id').doUpdateSet({
          status: (eb) => eb.ref('excluded.status'),
          ended_at: (eb) => eb.ref('excluded.ended_at'),
          step_count: sql<never>`run_journals.step_count + excluded.step_count`,
        }),
      )
      .returning(['conversation_id', 'step_count']),
    insertRunSteps: { compile: () => d.insertRunSteps.compile(db) },
    runsOfConversationFirstPage: newestRuns,
    runsOfConversationPageAfter: newestRuns.where(sql<boolean>`(started_at, run_id) < (${p('started_at')}, ${p('run_id')})`),
    selectRunJournal: db.selectFrom('run_journals').selectAll().where('run_id', '=', p('run_id')),
    selectRunSteps: db.selectFrom('run_steps').selectAll().where('run_id', '=', p('run_id')).orderBy('idx'),
    // Journal retention: the runs that ended before `before`, the earliest first through run_journals_ended, at most
    // `limit`; their steps go with them (ON DELETE CASCADE). A run not ended has no ended_at: never one of them.
    deleteEndedRuns: db
      .deleteFrom('run_journals')
      .where(
        'run_id',
        'in',
        db
          .selectFrom('run_journals')
          .select('run_id')
          .where('ended_at', 'is not', null)
          .where('ended_at', '<', p('before'))
          .where('status', 'in', [lit('completed'), lit('cancelled'), lit('interrupted')])
          .orderBy('ended_at')
          .orderBy('run_id')
          .limit(p('limit')),
      )
      .returning('step_count'),

    // Only a lease its owner holds on a running turn; a release never makes it last longer.
    renewRunLease: db
      .updateTable('conversations')
      .set({ lease_expires_at: d.leaseUntil('ttl_ms') })
      .where('id', '=', p('id'))
      .where('lease_owner', '=', p('owner'))
      .where('running_turn_boot', 'is not', null),
    releaseRunLease: db
      .updateTable('conversations')
      .set({
        lease_expires_at: sql<never>`CASE WHEN lease_expires_at < ${d.leaseNow('now_ms')} THEN lease_expires_at ELSE ${d.leaseNow('now_ms')} END`,
      })
      .where('id', '=', p('id'))
      .where('lease_owner', '=', p('owner'))
      .where('running_turn_boot', 'is not', null),
    // Oldest expiry first over the leased marks: expired, an earlier boot's of the taker's node, its own given up.
    // PostgreSQL skips rows another taker locked: each run goes to one.
    selectTakeoverCandidates: db
      .selectFrom('conversations')
      .select(['id', 'lease_owner'])
      .where('lease_owner', 'is not', null)
      .where('running_turn_boot', 'is not', null)
      .where(
        sql<boolean>`((lease_owner <> ${p('owner')} AND (lease_expires_at <= ${d.leaseNow('now')} OR lease_node = ${p('node')}))
          OR (lease_owner = ${p('owner')} AND ${d.inList('id', 'given_up', 'uuid')}))`,
      )
      .orderBy('lease_expires_at')
      .orderBy('id')
      .limit(p('limit'))
      .$if(d.name === 'postgres', (query) => query.forUpdate().skipLocked()),
    // The taken mark is fresh and the taker's: the run goes on as a running turn of its store.
    takeOverRun: db
      .updateTable('conversations')
      .set({
        lease_owner: p('owner'),
        lease_node: p('node'),
        lease_expires_at: d.leaseUntil('ttl_ms', 'now'),
        lease_takeovers: sql<never>`lease_takeovers + 1`,
        running_turn_boot: p('boot'),
        running_turn_since: p('since'),
      })
      .where('id', '=', p('id'))
      .returning('lease_takeovers'),
  };
}

export type QueryName = keyof ReturnType<typeof buildQueries>;
export type StoreQueries = Record<QueryName, NamedQuery>;

/** The store's statements compiled for one database; each a constant, built once per process. */
export const QUERIES: Record<DialectName, StoreQueries> = {
  sqlite: namingIndexes(compileQueries(buildQueries(sqliteSql))),
  postgres: compileQueries(buildQueries(postgresSql)),
};

/** SQLite plans without statistics: ListDueApprovals would walk pending approvals by status, not the partial index. */
function namingIndexes(queries: StoreQueries): StoreQueries {
  const due = queries.dueApprovals;
  return { ...queries, dueApprovals: { ...due, sql: due.sql.replace('from "approvals"', 'from "approvals" INDEXED BY approvals_due') } };
}
