/**
 * The API token the web chat signs in with: kept in the tab's session storage, so it
 * is gone when the tab closes and never shared with other tabs or written to disk by the app,
 * and sent as `Authorization: Bearer …` on every call (trpc.ts).
 */

const KEY = 'asg.token';

/** Storage can be unavailable (privacy modes, sandboxed frames): then nobody is signed in. */
function storage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

export function sessionToken(): string | undefined {
  return storage()?.getItem(KEY) || undefined;
}

export function keepSessionToken(token: string): void {
  storage()?.setItem(KEY, token.trim());
}

export function forgetSessionToken(): void {
  storage()?.removeItem(KEY);
}

/** A pasted token may carry its scheme or surrounding blanks; the header wants the bare token. */
export function bareToken(text: string): string {
  return text
    .trim()
    .replace(/^Bearer\s+/i, '')
    .trim();
}

export function authorizationHeaders(): Record<string, string> {
  const token = sessionToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}
