import { registerSecret } from '../common/secrets.js';

/** The environment variable that names the NATS server of the events; it wins over `events.url`. */
const EVENTS_URL_ENV = 'ASG_EVENTS_URL';

/** Whether a URL names a NATS server. */
function isNatsUrl(url: string): boolean {
  return /^nats:\/\//i.test(url);
}

/** The events URL in effect: ASG_EVENTS_URL when set, else `events.url`; empty for none. */
export function eventsUrl(config: { events: { url: string } }, env: NodeJS.ProcessEnv): string {
  const url = (env[EVENTS_URL_ENV] ?? '').trim() || config.events.url;
  if (url !== '' && !isNatsUrl(url)) throw new Error(`${EVENTS_URL_ENV} must be a nats:// URL (or unset for PostgreSQL LISTEN/NOTIFY)`);
  return url;
}

export interface NatsServer {
  /** `host:port`, as the client takes it. */
  server: string;
  user?: string;
  pass?: string;
  /** A user name with no password is a token (`nats://token@host`), as the NATS tools read it. */
  token?: string;
  /** The URL as it may be shown: without its credentials. */
  redacted: string;
}

/** The server and credentials of a `nats://` URL; the credentials are registered as secrets. */
export function natsServer(url: string): NatsServer {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    registerSecret(url);
    throw new Error('the events URL is not a valid nats:// URL');
  }
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  for (const secret of [parsed.username, parsed.password, user, pass]) if (secret !== '') registerSecret(secret);
  const server = `${parsed.hostname}:${parsed.port || '4222'}`;
  const redacted = `nats://${user === '' ? '' : '***@'}${server}`;
  if (user !== '' && pass === '') return { server, token: user, redacted };
  return { server, ...(user === '' ? {} : { user, pass }), redacted };
}
