import { ClientCredentialsProvider, type AuthProvider, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../common/config/schema.js';
import { registerSecret } from '../common/secrets.js';

/** The credentials the broker itself presents to an HTTP MCP server. */
export interface ServerAuth {
  provider: AuthProvider | OAuthClientProvider;
}

function secretFrom(env: NodeJS.ProcessEnv, variable: string, field: string): string {
  const value = env[variable];
  if (value === undefined || value.trim() === '') throw new Error(`the environment variable ${variable} (${field}) is not set`);
  // Redacted from every log line from now on, should any error text ever carry it.
  registerSecret(value);
  return value;
}

/**
 * The server's `bearer_token_env` (a static token on every request) or `oauth` (the SDK's
 * client_credentials provider: on the server's 401 it discovers the authorization server from
 * the server's protected-resource metadata, RFC 9728, and that server's metadata, RFC 8414,
 * asks its token endpoint with client_secret_basic, and retries once with the token; a token
 * that expires is fetched again the same way). Secrets are read from the environment once, at
 * start, and live only in memory. Undefined for a server without credentials.
 */
export function serverAuth(config: McpServerConfig, env: NodeJS.ProcessEnv = process.env): ServerAuth | undefined {
  if (config.bearer_token_env) {
    const token = secretFrom(env, config.bearer_token_env, 'bearer_token_env');
    return { provider: { token: async () => token } };
  }
  if (config.oauth) {
    const { client_id, client_secret_env, scope, issuer } = config.oauth;
    const clientSecret = secretFrom(env, client_secret_env, 'oauth.client_secret_env');
    return {
      provider: new ClientCredentialsProvider({
        clientId: client_id,
        clientSecret,
        clientName: 'asg-tool-broker',
        ...(scope && { scope }),
        ...(issuer && { expectedIssuer: issuer }),
      }),
    };
  }
  return undefined;
}
