import type { Role } from '../../gateway/app/principal.js';

/**
 * The `auth` config and the environment of an agent that knows these API tokens, each read from
 * `<NAME>_TOKEN` as a deployment would (token_env), never written into the config file.
 */
export function tokenAuth(holders: Record<string, { token: string; roles: Role[] }>): {
  config: { auth: { tokens: { name: string; token_env: string; roles: Role[] }[] } };
  env: Record<string, string>;
} {
  const entries = Object.entries(holders).map(([name, { token, roles }]) => ({
    name,
    variable: `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_TOKEN`,
    token,
    roles,
  }));
  return {
    config: { auth: { tokens: entries.map(({ name, variable, roles }) => ({ name, token_env: variable, roles })) } },
    env: Object.fromEntries(entries.map(({ variable, token }) => [variable, token])),
  };
}
