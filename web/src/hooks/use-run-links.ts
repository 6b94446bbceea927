import { useEffect, useRef, useState } from 'react';
import type { MessageJson } from '../api-types.js';
import { runsByMessage } from '../state/run-links.js';
import { api } from '../trpc.js';

/** The newest runs read for the links; older user messages of a very long conversation get none. */
const RUNS_READ = 500;

/**
 * The run each user message of the open conversation started (`runs.list` mapped by the runs'
 * message_seq), read again when its message count changes. A failure leaves the links out: they
 * are a way to the run's page, not part of the conversation.
 */
export function useRunLinks(conversationId: string | undefined, messages: readonly MessageJson[] | undefined): Map<string, string> {
  const [runs, setRuns] = useState<{ run_id: string; message_seq: number | null }[]>([]);
  const generation = useRef(0);
  const count = messages?.length ?? 0;

  useEffect(() => {
    setRuns([]);
    if (!conversationId || count === 0) return;
    const mine = ++generation.current;
    api.runs.list
      .query({ conversationId, limit: RUNS_READ })
      .then((reply) => {
        if (mine === generation.current) setRuns(reply.runs);
      })
      .catch(() => undefined);
  }, [conversationId, count]);

  return runsByMessage(messages ?? [], runs);
}
