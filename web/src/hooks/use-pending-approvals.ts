import { useEffect, useState } from 'react';
import { unwrapReceived } from '../api-types.js';
import { applyPendingUpdate, noPending, type PendingSet } from '../state/pending-approvals.js';
import { api, errorText } from '../trpc.js';

/** Every waiting approval of every conversation, live (`approvals.pending`). */
export function usePendingApprovals(): { pending: PendingSet; error?: string } {
  const [pending, setPending] = useState<PendingSet>(noPending);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const subscription = api.approvals.pending.subscribe(undefined, {
      onData: (received) => {
        setPending((set) => applyPendingUpdate(set, unwrapReceived(received)));
        setError(undefined);
      },
      onConnectionStateChange: (connection) => {
        if (connection.state === 'connecting' && connection.error) setError(errorText(connection.error));
        if (connection.state === 'pending') setError(undefined);
      },
      onError: (failure) => setError(errorText(failure)),
    });
    return () => subscription.unsubscribe();
  }, []);
  return { pending, ...(error && { error }) };
}
