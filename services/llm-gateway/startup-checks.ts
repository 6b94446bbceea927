import type { AgentConfig, AgentNodeInput } from '../common/config/schema.js';
import type { ProviderEnvironment } from './environment.js';
import { routeModel, type ModelRoute } from './routing.js';

/** A model the config names, and where: "llm.model" or the path of a node's `model`. */
export interface ConfiguredModel {
  model: string;
  where: string;
}

/** Every place the config names a model: `llm.model` and each `model:` of the agent tree. */
export function configuredModels(config: Pick<AgentConfig, 'llm' | 'agent'>): ConfiguredModel[] {
  const models: ConfiguredModel[] = [{ model: config.llm.model, where: 'llm.model' }];
  const visit = (node: AgentNodeInput, path: string): void => {
    if (node.model) models.push({ model: node.model, where: `${path}.model (node "${node.name}")` });
    node.agents?.forEach((child, index) => {
      visit(child, `${path}.agents[${index}]`);
    });
  };
  if (config.agent) visit(config.agent, 'agent');
  return models;
}

/**
 * One line per configured model that routes nowhere (an unknown `provider:`, a bare prefix, a
 * name of no provider), naming where the config says it. Such a config can never work, so it
 * stops the start. The CLI refuses such a file before this runs (common/config/check.ts, with
 * the same rules and words); this guards a service started by other code.
 */
export function routingErrors(models: readonly ConfiguredModel[]): string[] {
  const errors: string[] = [];
  for (const { model, where } of models) {
    try {
      routeModel(model);
    } catch (error) {
      errors.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return errors;
}

/**
 * One line per missing key, naming the models it breaks. Not fatal (validation is
 * lazy): the models fail on use, and the warning says so up front.
 */
export function startupWarnings(models: readonly ConfiguredModel[], environment: ProviderEnvironment): string[] {
  const missingKey = new Map<string, Set<string>>();
  for (const { model } of models) {
    let route: ModelRoute;
    try {
      route = routeModel(model);
    } catch {
      continue;
    }
    if (route.keyEnv && !environment.get(route.provider)?.apiKey)
      missingKey.set(route.keyEnv, (missingKey.get(route.keyEnv) ?? new Set()).add(route.model));
  }
  return [...missingKey].map(([keyEnv, names]) => `${keyEnv} is not set; models ${[...names].join(', ')} will fail`);
}
