import { registerSecret } from '../../common/secrets.js';

/*
 * What the store needs to know about a database URL before it decides on a driver: kept apart
 * from the driver, so that a store on SQLite never loads pg or NATS.
 */

/** Whether a store URL names a PostgreSQL database (else the store is SQLite in data_dir). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * The URL as it may be shown: without its password. The password is registered as a secret,
 * so that an error text or log line that quotes the URL is redacted too.
 */
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
