import { useCallback, useEffect, useRef, useState } from 'react';
import type { RunJson, RunSummaryJson } from '../api-types.js';
import { runEnded } from '../state/run-inspector.js';
import { api, errorText, isNotFound } from '../trpc.js';

/** How often a run that has not ended is read again, so that its inspector follows it. */
const FOLLOW_MS = 3_000;

export type RunState =
  | { state: 'loading' }
  | { state: 'loaded'; run: RunJson; error?: string }
  | { state: 'not-found' }
  | { state: 'failed'; error: string };

/**
 * One run with its journal (`runs.get`), read again every few seconds until it has ended. A
 * run that does not exist and one of another owner's conversation are both "not found": the
 * gateway answers them alike, so nobody learns that a run they may not read exists.
 */
export function useRun(runId: string): RunState {
  const [state, setState] = useState<RunState>({ state: 'loading' });
  const generation = useRef(0);

  const read = useCallback(async (): Promise<RunJson | undefined> => {
    const mine = ++generation.current;
    try {
      const run = await api.runs.get.query({ runId });
      if (mine === generation.current) setState({ state: 'loaded', run });
      return run;
    } catch (failure) {
      if (mine !== generation.current) return undefined;
      if (isNotFound(failure)) setState({ state: 'not-found' });
      // A failed re-read keeps what was shown, with why it is not fresh.
      else
        setState((shown) =>
          shown.state === 'loaded' ? { ...shown, error: errorText(failure) } : { state: 'failed', error: errorText(failure) },
        );
      return undefined;
    }
  }, [runId]);

  useEffect(() => {
    setState({ state: 'loading' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const follow = async () => {
      const run = await read();
      if (!stopped && run && !runEnded(run)) timer = setTimeout(() => void follow(), FOLLOW_MS);
    };
    void follow();
    return () => {
      stopped = true;
      generation.current += 1;
      if (timer) clearTimeout(timer);
    };
  }, [read]);

  return state;
}

/** How many runs a page of the list asks for. */
const RUNS_PAGE = 20;

export interface RunsState {
  runs: RunSummaryJson[];
  loaded: boolean;
  notFound: boolean;
  error?: string;
  /** Whether older runs are left to read. */
  more: boolean;
  loadMore(): void;
}

/** A conversation's runs (`runs.list`), newest first, a page at a time: the next page when asked. */
export function useRuns(conversationId: string): RunsState {
  const [runs, setRuns] = useState<RunSummaryJson[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [loaded, setLoaded] = useState(false);
  const [notFound, setNotFound] = useState(false);
  const [error, setError] = useState<string>();
  const generation = useRef(0);

  const read = useCallback(
    async (after: string | undefined) => {
      const mine = generation.current;
      try {
        const page = await api.runs.list.query({ conversationId, limit: RUNS_PAGE, ...(after && { cursor: after }) });
        if (mine !== generation.current) return;
        setRuns((shown) => (after ? [...shown, ...page.runs] : page.runs));
        setCursor(page.next_cursor);
        setError(undefined);
      } catch (failure) {
        if (mine !== generation.current) return;
        if (isNotFound(failure)) setNotFound(true);
        else setError(errorText(failure));
      } finally {
        if (mine === generation.current) setLoaded(true);
      }
    },
    [conversationId],
  );

  useEffect(() => {
    generation.current += 1;
    setRuns([]);
    setCursor(undefined);
    setLoaded(false);
    setNotFound(false);
    setError(undefined);
    void read(undefined);
  }, [read]);

  return {
    runs,
    loaded,
    notFound,
    more: cursor !== undefined,
    loadMore: () => void read(cursor),
    ...(error && { error }),
  };
}
