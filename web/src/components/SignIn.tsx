import { useState, type FormEvent } from 'react';
import type { WhoamiState } from '../hooks/use-whoami.js';
import { bareToken, forgetSessionToken, keepSessionToken, sessionToken } from '../state/session-token.js';

/**
 * Who is signed in, and the sign-in box: an API token typed here is kept in this
 * tab's session storage and sent with every call. Signing in or out reloads the page, so that
 * the live streams reconnect with the new identity.
 */
export function SignIn({ whoami: { identity, check } }: { whoami: WhoamiState }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);

  const signIn = async (event: FormEvent) => {
    event.preventDefault();
    const token = bareToken(text);
    if (!token) return;
    setBusy(true);
    setProblem(undefined);
    const before = sessionToken();
    keepSessionToken(token);
    const who = await check();
    setBusy(false);
    if (who.state === 'signed-in' || who.state === 'off') {
      window.location.reload();
      return;
    }
    // Keep what worked before, if anything; a refused token is not kept.
    if (before) keepSessionToken(before);
    else forgetSessionToken();
    setProblem(who.state === 'unknown' ? who.error : 'The token was refused: check that you copied all of it, or ask for a new one.');
  };

  const signOut = () => {
    forgetSessionToken();
    window.location.reload();
  };

  const showForm = identity.state === 'signed-out' || (open && identity.state === 'unknown');
  return (
    <div className="identity" data-testid="identity" data-state={identity.state}>
      {identity.state === 'signed-in' && (
        <>
          <span className="identity-name">
            Signed in as <strong data-testid="identity-name">{identity.name}</strong>
          </span>
          <button type="button" className="link-button" onClick={signOut}>
            Sign out
          </button>
        </>
      )}
      {identity.state === 'off' && (
        <span className="identity-name" title="This agent checks no tokens: decisions are recorded as anonymous.">
          <strong data-testid="identity-name">anonymous</strong>
          <span className="identity-hint"> · no sign-in needed</span>
        </span>
      )}
      {identity.state === 'unknown' && !showForm && (
        <>
          <span className="identity-name">{identity.error}</span>
          <button type="button" className="link-button" onClick={() => setOpen(true)}>
            Sign in
          </button>
        </>
      )}
      {showForm && (
        <form className="sign-in" aria-label="Sign in" onSubmit={(event) => void signIn(event)}>
          <span className="identity-name">not signed in</span>
          <input
            type="password"
            aria-label="API token"
            placeholder="API token"
            autoComplete="off"
            value={text}
            disabled={busy}
            onChange={(event) => setText(event.target.value)}
          />
          <button type="submit" disabled={busy || !bareToken(text)}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
          {problem && (
            <span className="sign-in-problem" role="alert">
              {problem}
            </span>
          )}
        </form>
      )}
    </div>
  );
}
