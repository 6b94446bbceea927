import { createHash, timingSafeEqual } from 'node:crypto';
import type { AgentConfig } from '../../services/common/config/schema.js';
import { tokenPrincipal } from '../../services/common/principal-id.js';
import { registerSecret } from '../../services/common/secrets.js';
import type { Role } from '../app/principal.js';
import type { Identity } from './verdict.js';

/**
 * The API tokens of `auth.tokens`: each a name, its roles and the SHA-256 of its secret. A
 * secret named by `token_env` is read from the environment once, at start, hashed, and
 * registered with the secret redaction; `token_sha256` gives the hash alone, so the file holds
 * nothing that lets anyone in. A presented token is hashed and compared with every configured
 * hash in constant time (no early exit), so the answer's timing says nothing about how close
 * a guess was.
 */

interface HashedToken {
  name: string;
  roles: readonly Role[];
  digest: Buffer;
}

/** A secret shorter than this is refused at start: it could be guessed. */
const MIN_TOKEN_LENGTH = 16;

export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export class ApiTokens {
  private constructor(private readonly tokens: readonly HashedToken[]) {}

  /**
   * Reads the configured tokens; throws AuthConfigError naming the entry and the variable when
   * a `token_env` is unset, empty or too short, and when two entries share one secret (a token
   * must name exactly one identity).
   */
  static load(entries: NonNullable<AgentConfig['auth']>['tokens'], env: NodeJS.ProcessEnv = process.env): ApiTokens {
    const tokens: HashedToken[] = entries.map((entry, index) => {
      const where = `auth.tokens[${index}] (${entry.name})`;
      if (entry.token_sha256 !== undefined) return { name: entry.name, roles: entry.roles, digest: Buffer.from(entry.token_sha256, 'hex') };
      const variable = entry.token_env!;
      const secret = env[variable];
      if (secret === undefined || secret === '') {
        throw new AuthConfigError(
          `${where}: the environment variable ${variable} is not set; it must hold ${entry.name}'s token (or give token_sha256 instead)`,
        );
      }
      if (secret.length < MIN_TOKEN_LENGTH) {
        throw new AuthConfigError(
          `${where}: the token in ${variable} is ${secret.length} characters; use at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`,
        );
      }
      registerSecret(secret);
      return { name: entry.name, roles: entry.roles, digest: sha256(secret) };
    });
    const seen = new Map<string, string>();
    for (const token of tokens) {
      const key = token.digest.toString('hex');
      const other = seen.get(key);
      if (other !== undefined)
        throw new AuthConfigError(`auth.tokens: ${other} and ${token.name} have the same token; each token must name one identity`);
      seen.set(key, token.name);
    }
    return new ApiTokens(tokens);
  }

  get size(): number {
    return this.tokens.length;
  }

  /** The identity whose token this is (the principal `token:<name>`), or undefined. Every configured hash is compared, whatever matched first. */
  verify(token: string): Identity | undefined {
    const digest = sha256(token);
    let found: HashedToken | undefined;
    for (const candidate of this.tokens) {
      if (timingSafeEqual(candidate.digest, digest) && found === undefined) found = candidate;
    }
    return found && { id: tokenPrincipal(found.name), name: found.name, roles: found.roles };
  }
}
