import { useCallback, useEffect, useState } from 'react';
import type { ConversationListItemJson } from '../api-types.js';
import { api, errorText } from '../trpc.js';

/** The newest conversations (one page of summaries: title and counts, no messages), read again whenever `refresh` is called. */
export function useConversations() {
  const [conversations, setConversations] = useState<ConversationListItemJson[]>([]);
  const [error, setError] = useState<string>();
  const refresh = useCallback(async () => {
    try {
      const page = await api.conversations.list.query({ limit: 50 });
      setConversations(page.conversations);
      setError(undefined);
    } catch (failure) {
      setError(errorText(failure));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return { conversations, error, refresh };
}
