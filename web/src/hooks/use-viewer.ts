import { useEffect, useState } from 'react';
import { api } from '../trpc.js';

/** The signed-in principal, asked once per page load; undefined without authentication or when it cannot be told. */
let asked: Promise<string | undefined> | undefined;

/**
 * Who reads an approval card, as votes and requested_by name principals ("token:alice"), for
 * "you cannot approve your own request". Asked only when `needed` (an approval with a quorum).
 */
export function useViewer(needed: boolean): string | undefined {
  const [viewer, setViewer] = useState<string>();
  useEffect(() => {
    if (!needed) return;
    asked ??= api.auth.whoami.query().then(
      (who) => (who.authentication === 'off' ? undefined : who.principal),
      () => undefined,
    );
    let live = true;
    void asked.then((principal) => {
      if (live) setViewer(principal);
    });
    return () => {
      live = false;
    };
  }, [needed]);
  return viewer;
}
