import { invalidArgument } from '../common/grpc/errors.js';
import { ModelNameError, resolveModel, ROUTES, type ModelRoute, type ProviderRoute } from '../common/config/models.js';

/**
 * Which provider serves a model name: the rules live in common/config/models.ts, shared with
 * the configuration check, so a name startup refuses is the name a call refuses, in the same words.
 */
export type { ModelRoute, ProviderName, ProviderRoute } from '../common/config/models.js';

/** Every provider's route, for start-up checks that look at keys and base URLs. */
export const PROVIDER_ROUTES: readonly ProviderRoute[] = Object.values(ROUTES);

/** Routes a model name; INVALID_ARGUMENT for one that routes nowhere (models.ts says which and why). */
export function routeModel(model: string): ModelRoute {
  try {
    return resolveModel(model);
  } catch (error) {
    if (error instanceof ModelNameError) throw invalidArgument(error.message);
    throw error;
  }
}
