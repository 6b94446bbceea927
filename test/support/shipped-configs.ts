/** Every configuration file the project ships, with the JSON Schema its first line names. */
export const SHIPPED_CONFIGS: readonly { file: string; schema: string }[] = [
  { file: 'config/agent.yaml', schema: 'agent.schema.json' },
  { file: 'config/sequential.yaml', schema: 'agent.schema.json' },
  { file: 'config/web.yaml', schema: 'web.schema.json' },
  { file: 'config/filesystem.yaml', schema: 'filesystem.schema.json' },
  { file: 'deploy/agent.compose.yaml', schema: 'agent.schema.json' },
  { file: 'deploy/kubernetes/base/agent.yaml', schema: 'agent.schema.json' },
];
