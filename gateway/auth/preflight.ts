import type { GatewayConfig } from '../../services/common/config/slices.js';
import { assertBindingAllowed } from './binding.js';
import { ApiTokens } from './tokens.js';

export { InsecureBindingError } from './binding.js';
export { AuthConfigError } from './tokens.js';

/**
 * The checks a gateway start would fail on, without starting anything: the CLI runs them before
 * it starts the mesh (and loads none of the services to do so). The bind rule, and that every
 * `token_env` is set.
 */
export function checkAuthConfig(
  config: Pick<GatewayConfig, 'host' | 'port' | 'auth' | 'insecure'>,
  env: NodeJS.ProcessEnv = process.env,
): void {
  assertBindingAllowed(config);
  if (config.auth) ApiTokens.load(config.auth.tokens, env);
}
