import { cpSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from './agent-process.js';

/** Every configuration file the project ships, with the JSON Schema its first line names. */
export const SHIPPED_CONFIGS: readonly { file: string; schema: string }[] = [
  { file: 'config/agent.yaml', schema: 'agent.schema.json' },
  { file: 'config/sequential.yaml', schema: 'agent.schema.json' },
  { file: 'config/web.yaml', schema: 'web.schema.json' },
  { file: 'config/filesystem.yaml', schema: 'filesystem.schema.json' },
  { file: 'deploy/agent.compose.yaml', schema: 'agent.schema.json' },
  { file: 'deploy/kubernetes/base/agent.yaml', schema: 'agent.schema.json' },
];

/**
 * A folder laid out as a fresh clone is, for what a configuration reaches: the shipped `config/`
 * files copied, `bin/` linked to this checkout's (its `asg` runs this build), and no `data/`.
 */
export function freshClone(): string {
  const dir = tempDir('asg-clone-');
  cpSync(join(REPO_ROOT, 'config'), join(dir, 'config'), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'bin'), join(dir, 'bin'));
  return dir;
}
