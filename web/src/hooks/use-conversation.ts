import { useCallback, useEffect, useReducer, useState } from 'react';
import { unwrapReceived, type ConversationJson, type ConversationUpdate } from '../api-types.js';
import { applyUpdate, emptyChat, replaceConversation, type ChatState } from '../state/conversation-state.js';
import { forgetWatched, markWatched } from '../state/watch-ready.js';
import { api, errorText } from '../trpc.js';

/** Whether live updates arrive: `live`, `connecting` (retrying, with the reason) or `failed`. */
export type LiveStatus = { state: 'live' } | { state: 'connecting'; reason?: string } | { state: 'failed'; reason: string };

/** While the event stream is down, the conversation is read this often instead. */
const POLL_WHILE_OFFLINE_MS = 3_000;

type Action = { type: 'reset' } | { type: 'update'; update: ConversationUpdate } | { type: 'replace'; conversation: ConversationJson };

function reducer(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case 'reset':
      return emptyChat;
    case 'update':
      return applyUpdate(state, action.update);
    case 'replace':
      return replaceConversation(state, action.conversation);
  }
}

/**
 * One conversation, kept current: read once, then `conversation.events` (which begins with
 * a snapshot, then every change, text deltas included). If the stream cannot be had, the
 * conversation is read again every few seconds so the chat still moves on.
 */
export function useConversation(conversationId: string | undefined) {
  const [chat, dispatch] = useReducer(reducer, emptyChat);
  const [loadError, setLoadError] = useState<string>();
  const [live, setLive] = useState<LiveStatus>({ state: 'connecting' });

  const reload = useCallback(async () => {
    if (!conversationId) return;
    try {
      const { conversation } = await api.conversations.get.query({ id: conversationId });
      dispatch({ type: 'replace', conversation });
      setLoadError(undefined);
    } catch (error) {
      setLoadError(errorText(error));
    }
  }, [conversationId]);

  useEffect(() => {
    dispatch({ type: 'reset' });
    setLoadError(undefined);
    if (!conversationId) return;
    void reload();
    setLive({ state: 'connecting' });
    const subscription = api.conversation.events.subscribe(
      { conversationId },
      {
        onData: (received) => {
          dispatch({ type: 'update', update: unwrapReceived(received) });
          markWatched(conversationId);
        },
        onConnectionStateChange: (connection) => {
          if (connection.state === 'pending') setLive({ state: 'live' });
          else if (connection.state === 'connecting')
            setLive({ state: 'connecting', ...(connection.error && { reason: errorText(connection.error) }) });
        },
        onError: (error) => setLive({ state: 'failed', reason: errorText(error) }),
      },
    );
    return () => {
      forgetWatched(conversationId);
      subscription.unsubscribe();
    };
  }, [conversationId, reload]);

  useEffect(() => {
    if (!conversationId || live.state === 'live') return;
    const timer = setInterval(() => void reload(), POLL_WHILE_OFFLINE_MS);
    return () => clearInterval(timer);
  }, [conversationId, live.state, reload]);

  const replace = useCallback((conversation: ConversationJson) => dispatch({ type: 'replace', conversation }), []);
  return { chat, loadError, live, replace };
}
