import { useCallback, useEffect, useState } from 'react';
import { api, errorText, isUnauthenticated } from '../trpc.js';

/**
 * Who the chat is signed in as (`auth.whoami`): a name when the gateway checks tokens,
 * `off` when it has no authentication (everyone is anonymous), `signed-out` when a token is
 * needed and the session has none that the gateway takes.
 */
type Identity =
  | { state: 'loading' }
  | { state: 'signed-in'; name: string; roles: string[] }
  | { state: 'off' }
  | { state: 'signed-out' }
  | { state: 'unknown'; error: string };

export interface WhoamiState {
  identity: Identity;
  check(): Promise<Identity>;
}

export function useWhoami(): WhoamiState {
  const [identity, setIdentity] = useState<Identity>({ state: 'loading' });
  const check = useCallback(async (): Promise<Identity> => {
    let next: Identity;
    try {
      const who = await api.auth.whoami.query();
      next = who.authentication === 'off' ? { state: 'off' } : { state: 'signed-in', name: who.name, roles: who.roles };
    } catch (error) {
      next = isUnauthenticated(error) ? { state: 'signed-out' } : { state: 'unknown', error: errorText(error) };
    }
    setIdentity(next);
    return next;
  }, []);
  useEffect(() => {
    void check();
  }, [check]);
  return { identity, check };
}
