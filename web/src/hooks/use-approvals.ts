import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApprovalRecordJson, ApprovalStatusName } from '../api-types.js';
import { api, errorText } from '../trpc.js';

/** A conversation with more approvals than this shows the newest decisions it has read. */
const MAX_PAGES = 10;
const PAGE_SIZE = 500;

export interface ApprovalsQuery {
  /** Undefined: every status. */
  status?: ApprovalStatusName[];
  conversationId?: string;
  /** Only the pending approvals the reader may still vote for or decide. */
  needsMyVote?: boolean;
}

/**
 * Approvals as resources (`approvals.list`, oldest first), read again whenever `refreshKey`
 * changes — the caller passes something that changes with every approval event it sees, so the
 * list stays live without a stream of its own. Pages are read up to a bound: a queue of pending
 * approvals, or the decisions of one conversation, fits in a few.
 */
export function useApprovals(
  query: ApprovalsQuery | undefined,
  refreshKey: unknown,
): { approvals: ApprovalRecordJson[]; error?: string; loaded: boolean } {
  const [approvals, setApprovals] = useState<ApprovalRecordJson[]>([]);
  const [error, setError] = useState<string>();
  const [loaded, setLoaded] = useState(false);
  const generation = useRef(0);
  const status = query?.status?.join(',');
  const conversationId = query?.conversationId;
  const needsMyVote = query?.needsMyVote === true;
  const enabled = query !== undefined;

  const read = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const all: ApprovalRecordJson[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const reply = await api.approvals.list.query({
          limit: PAGE_SIZE,
          ...(status && { status: status.split(',') as ApprovalStatusName[] }),
          ...(conversationId && { conversationId }),
          ...(needsMyVote && { needsMyVote }),
          ...(cursor && { cursor }),
        });
        all.push(...reply.approvals);
        cursor = reply.next_cursor;
        if (!cursor) break;
      }
      // A slower earlier read must not overwrite a newer one.
      if (mine !== generation.current) return;
      setApprovals(all);
      setError(undefined);
    } catch (failure) {
      if (mine === generation.current) setError(errorText(failure));
    } finally {
      if (mine === generation.current) setLoaded(true);
    }
  }, [status, conversationId, needsMyVote]);

  useEffect(() => {
    setApprovals([]);
    setLoaded(false);
  }, [status, conversationId, needsMyVote]);

  useEffect(() => {
    if (enabled) void read();
  }, [enabled, read, refreshKey]);

  return { approvals, loaded, ...(error && { error }) };
}
