/**
 * The `WWW-Authenticate` challenge of the gateway's refusals (RFC 6750 §3): every 401
 * carries `Bearer realm="agent-stop-and-go"`, with `error="invalid_token"` for a token that was
 * refused and `error="invalid_request"` for a header that is no bearer token (none when nothing
 * was sent), and every 403 `error="insufficient_scope"`. An MCP 401 may also name the
 * protected-resource metadata (RFC 9728 `resource_metadata`).
 */

const REALM = 'agent-stop-and-go';

export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export function bearerChallenge(error?: BearerError, resourceMetadataUrl?: string): string {
  let value = `Bearer realm="${REALM}"`;
  if (error) value += `, error="${error}"`;
  if (resourceMetadataUrl) value += `, resource_metadata="${resourceMetadataUrl}"`;
  return value;
}
