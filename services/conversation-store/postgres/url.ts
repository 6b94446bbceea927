import { registerSecret } from '../../common/secrets.js';

// Kept apart from the driver, so that a store on SQLite never loads pg or NATS.

/** Whether a store URL names a PostgreSQL database (else the store is SQLite in data_dir). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** The URL without its password, which is registered as a secret (a text quoting the URL is redacted too). */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') {
      // As written in the URL (percent-encoded) and as sent to the server.
      registerSecret(parsed.password);
      registerSecret(decodeURIComponent(parsed.password));
      parsed.password = '***';
    }
    return parsed.toString();
  } catch {
    // Unparsable, so its password cannot be told apart: the whole text is the secret.
    registerSecret(url);
    return 'postgres://(an unparsable URL)';
  }
}
