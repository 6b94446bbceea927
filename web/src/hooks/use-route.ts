import { useCallback, useEffect, useState } from 'react';
import type { ApprovalStatusName } from '../api-types.js';

/**
 * What the page shows lives in the URL, so a reload or a shared link shows the same: a
 * conversation (`#/c/<id>`), or the approvals page (`#/approvals`, `#/approvals/<status>`, with
 * `all` for every status). A hash needs no server routes: the app is static files.
 */
export type Route = { page: 'chat'; conversationId?: string } | { page: 'approvals'; status: ApprovalFilter };

/** The approvals page's filter: one status, or every status. */
/** A status, every approval, or `mine`: the pending ones the reader may still vote for (`needs_my_vote`). */
export type ApprovalFilter = ApprovalStatusName | 'all' | 'mine';

export const APPROVAL_FILTERS: readonly ApprovalFilter[] = ['pending', 'mine', 'approved', 'rejected', 'expired', 'all'];

function routeFromHash(hash: string): Route {
  const conversation = /^#\/c\/([^/?#]+)$/.exec(hash);
  if (conversation) {
    try {
      return { page: 'chat', conversationId: decodeURIComponent(conversation[1]!) };
    } catch {
      return { page: 'chat' };
    }
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
    window.location.hash = id ? `#/c/${encodeURIComponent(id)}` : '#/';
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
