import { abortable, startReading, watchLifetime } from './abortable.js';
import type { EventFeed } from './event-feed.js';
import { conversationEventJson, type StoredEventJson } from './events.js';
import { pendingApprovalJson, type PendingApprovalJson } from './shapes.js';

type ApprovalEventJson = Extract<StoredEventJson, { kind: 'approval_requested' | 'approval_resolved' | 'approval_escalated' }>;

/**
 * Every waiting approval of every conversation, live: without a last event id, a `snapshot`
 * of the approvals pending now, then each approval as it is requested and as it leaves
 * pending; with one, only the approval events after it. A watcher keeps a set by uuid:
 * `approval_requested` adds, `approval_escalated` replaces (still pending), `approval_resolved` removes.
 */
export type PendingApprovalUpdate = { kind: 'snapshot'; approvals: PendingApprovalJson[] } | ApprovalEventJson;

export interface PendingApprovalUpdatesRequest {
  /** The id of the last stored event the watcher saw; 0 for a first connection. */
  afterId: number;
  signal?: AbortSignal;
}

/** Opens the watch; fails at once (UNAVAILABLE) when the snapshot cannot be read. */
export async function watchPendingApprovals(
  feed: EventFeed,
  request: PendingApprovalUpdatesRequest,
): Promise<AsyncGenerator<PendingApprovalUpdate, void>> {
  const { afterId, signal } = request;
  // Opened before the snapshot is read (see watchConversation): a request or resolution in
  // between reaches the watcher in the snapshot, the stream or both, and adding or removing
  // the same uuid twice changes nothing.
  const watching = watchLifetime(signal);
  const events = startReading(feed.watch({ afterId, signal: watching.signal }));
  let snapshot: PendingApprovalJson[] | undefined;
  try {
    if (afterId === 0) snapshot = (await feed.pendingApprovals()).map(pendingApprovalJson);
  } catch (error) {
    watching.end();
    throw error;
  }
  async function* updates(): AsyncGenerator<PendingApprovalUpdate, void> {
    try {
      if (snapshot) yield { kind: 'snapshot', approvals: snapshot };
      for await (const event of abortable(events, watching.signal)) {
        const json = conversationEventJson(event);
        if (json?.kind === 'approval_requested' || json?.kind === 'approval_resolved' || json?.kind === 'approval_escalated') yield json;
      }
    } finally {
      watching.end();
    }
  }
  return updates();
}
