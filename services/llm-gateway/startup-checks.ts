import type { AgentConfig, AgentNodeInput } from '../common/config/schema.js';
import { isProviderIncluded } from './clients.js';
import type { ProviderEnvironment } from './environment.js';
import { routeModel, type ModelRoute } from './routing.js';

/** Every model the config names: `llm.model` and each `model:` of the agent tree, once each. */
export function configuredModels(config: Pick<AgentConfig, 'llm' | 'agent'>): string[] {
  const models = new Set<string>([config.llm.model]);
  const visit = (node: AgentNodeInput): void => {
    if (node.model) models.add(node.model);
    node.agents?.forEach(visit);
  };
  if (config.agent) visit(config.agent);
  return [...models];
}

/**
 * What will fail when the configured models are called, one line per cause (a missing key,
 * a provider this build lacks, a name that routes nowhere). A missing key is not fatal at
 * start (seed 000: "lazy validation"); the warning says up front which models it breaks.
 */
export function startupWarnings(models: readonly string[], environment: ProviderEnvironment): string[] {
  const missingKey = new Map<string, string[]>();
  const missingProvider = new Map<string, string[]>();
  const unroutable: string[] = [];
  const add = (groups: Map<string, string[]>, key: string, model: string): void => {
    groups.set(key, [...(groups.get(key) ?? []), model]);
  };
  for (const model of models) {
    let route: ModelRoute;
    try {
      route = routeModel(model);
    } catch (error) {
      unroutable.push(error instanceof Error ? error.message : String(error));
      continue;
    }
    if (!isProviderIncluded(route.provider)) add(missingProvider, route.provider, model);
    else if (route.keyEnv && !environment.get(route.provider)?.apiKey) add(missingKey, route.keyEnv, model);
  }
  return [
    ...[...missingKey].map(([keyEnv, names]) => `${keyEnv} is not set; models ${names.join(', ')} will fail`),
    ...[...missingProvider].map(([provider, names]) => `this build does not include the ${provider} provider; models ${names.join(', ')} will fail`),
    ...unroutable,
  ];
}
