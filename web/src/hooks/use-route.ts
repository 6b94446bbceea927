import { useCallback, useEffect, useState } from 'react';
import type { ApprovalStatusName } from '../api-types.js';

/**
 * What the page shows lives in the URL, so a reload or a shared link shows the same: a
 * conversation (`#/c/<id>`), its runs (`#/c/<id>/runs`), one run's inspector (`#/runs/<run_id>`),
 * or the approvals page (`#/approvals`, `#/approvals/<status>`, with `all` for every status). A
 * hash needs no server routes: the app is static files.
 */
export type Route =
  | { page: 'chat'; conversationId?: string }
  | { page: 'runs'; conversationId: string }
  | { page: 'run'; runId: string }
  | { page: 'approvals'; status: ApprovalFilter };

/** The link to a run's inspector. */
export const runHash = (runId: string): string => `#/runs/${encodeURIComponent(runId)}`;

/** The link to a conversation's runs. */
export const runsHash = (conversationId: string): string => `#/c/${encodeURIComponent(conversationId)}/runs`;

/** The link to a conversation. */
export const conversationHash = (conversationId: string): string => `#/c/${encodeURIComponent(conversationId)}`;

/** A part of the hash, decoded; undefined when it is not valid percent-encoding. */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** The approvals page's filter: one status, or every status. */
/** A status, every approval, or `mine`: the pending ones the reader may still vote for (`needs_my_vote`). */
export type ApprovalFilter = ApprovalStatusName | 'all' | 'mine';

export const APPROVAL_FILTERS: readonly ApprovalFilter[] = ['pending', 'mine', 'approved', 'rejected', 'expired', 'all'];

function routeFromHash(hash: string): Route {
  const runs = /^#\/c\/([^/?#]+)\/runs$/.exec(hash);
  if (runs) {
    const conversationId = decoded(runs[1]!);
    return conversationId === undefined ? { page: 'chat' } : { page: 'runs', conversationId };
  }
  const run = /^#\/runs\/([^/?#]+)$/.exec(hash);
  if (run) {
    const runId = decoded(run[1]!);
    return runId === undefined ? { page: 'chat' } : { page: 'run', runId };
  }
  const conversation = /^#\/c\/([^/?#]+)$/.exec(hash);
  if (conversation) {
    const conversationId = decoded(conversation[1]!);
    return conversationId === undefined ? { page: 'chat' } : { page: 'chat', conversationId };
  }
  const approvals = /^#\/approvals(?:\/([a-z]+))?$/.exec(hash);
  if (approvals) {
    const status = (approvals[1] ?? 'pending') as ApprovalFilter;
    return { page: 'approvals', status: APPROVAL_FILTERS.includes(status) ? status : 'pending' };
  }
  return { page: 'chat' };
}

export function useRoute(): {
  route: Route;
  conversationId?: string;
  open(conversationId?: string): void;
  openApprovals(status?: ApprovalFilter): void;
} {
  const [route, setRoute] = useState(() => routeFromHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(routeFromHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  const open = useCallback((id?: string) => {
    window.location.hash = id ? conversationHash(id) : '#/';
  }, []);
  const openApprovals = useCallback((status: ApprovalFilter = 'pending') => {
    window.location.hash = status === 'pending' ? '#/approvals' : `#/approvals/${status}`;
  }, []);
  return {
    route,
    ...(route.page === 'chat' && route.conversationId !== undefined && { conversationId: route.conversationId }),
    open,
    openApprovals,
  };
}
