import type { ConfigPath } from './check.js';
import type { AgentConfig, AgentNodeInput } from './schema.js';

/** `llm.model` and each `model:` of the agent tree, with the path that holds it. */
export function configuredModels(config: Pick<AgentConfig, 'llm' | 'agent'>): { model: string; path: ConfigPath }[] {
  const models: { model: string; path: ConfigPath }[] = [{ model: config.llm.model, path: ['llm', 'model'] }];
  const visit = (node: AgentNodeInput, path: (string | number)[]): void => {
    if (node.model !== undefined) models.push({ model: node.model, path: [...path, 'model'] });
    node.agents?.forEach((child, index) => {
      visit(child, [...path, 'agents', index]);
    });
  };
  if (config.agent) visit(config.agent, ['agent']);
  return models;
}
