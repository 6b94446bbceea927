/**
 * Keeps API keys and bearer tokens out of logs, responses, stored data and error text.
 * Every string that leaves a service through one of those paths goes
 * through `redactSecrets`.
 */
const knownSecrets = new Set<string>();
const SECRET_ENV = /(_API_KEY|_TOKEN|_SECRET|_PASSWORD)$/;
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
// Shapes of common provider keys, caught even when they were never registered; and of a JWT
// (base64url of '{"' is "eyJ": a header and a payload that are JSON objects), which the
// gateway's callers present as bearer tokens.
const KEY_SHAPES = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];

/** Field names whose values are credentials whatever they look like: a log censors them, a run's journal redacts them. */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'authorization',
  'api_key',
  'apiKey',
  'token',
  'access_token',
  'refresh_token',
  'password',
  'secret',
  'cookie',
  'client_secret',
];

/** Registers a value that must never be shown; values shorter than 6 characters are ignored. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 6) knownSecrets.add(value);
}

/** Registers every environment variable that looks like a credential. */
export function registerEnvironmentSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(env)) {
    if (SECRET_ENV.test(name)) registerSecret(value);
  }
}

export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  out = out.replace(BEARER, '$1 [redacted]');
  for (const shape of KEY_SHAPES) out = out.replace(shape, '[redacted]');
  return out;
}
