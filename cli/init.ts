import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fail } from './usage.js';

/**
 * `asg init [DIR]`: a new agent's folder — agent.yaml, .env.example, a README of its own and a .gitignore.
 *
 * The agent's tool server is this package's built-in resources server, named by absolute paths
 * resolved now: the Node that runs this command and the package's own bin/asg. They hold
 * wherever the package lives (a clone, or the tarball of `npm pack` installed globally or in a
 * project), and the agent finds its tools whatever folder it is started from. Its data goes to
 * an absolute `data/` in DIR for the same reason. The server is `required`: should the package
 * move, the start says so instead of an agent without tools.
 */

export interface InitOptions {
  force?: boolean;
}

/** The folder of the package: the one above cli/ (under tsx) or above dist/cli/ (built) whose package.json is this package's. */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 3; level++) {
    folder = dirname(folder);
    try {
      const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'agent-stop-and-go') return folder;
    } catch {
      /* not this level */
    }
  }
  throw new Error('cannot find the agent-stop-and-go package above this command');
}

/** A name for the agent from its folder: lower case letters, digits and hyphens. */
function agentName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name === '' ? 'my-agent' : name;
}

/** A YAML scalar for any string: JSON's double-quoted strings are YAML's too. */
const quoted = (text: string): string => JSON.stringify(text);

function agentYaml(dir: string, root: string): string {
  const dataDir = join(dir, 'data');
  const asg = join(root, 'bin', 'asg');
  return `# yaml-language-server: $schema=${pathToFileURL(join(root, 'config', 'agent.schema.json')).href}
# Written by \`asg init\`. Check it with \`asg config check agent.yaml\`; README.md says how to run it.
# The paths below are absolute, so that the agent works from any folder: the Node and the asg
# package that ran \`asg init\` start the tool server, and the data stays in this folder's data/.

name: ${agentName(dir)}
description: Manages a list of named integer resources; asks before adding or removing any.

prompt: |
  You are a resource manager. You can list, add and remove resources with your tools.
  Use resources_list to answer questions about what exists. When the user asks to add or
  remove something, call the tool directly: a human approves destructive calls before they run.

host: 127.0.0.1
port: 8080
data_dir: ${quoted(dataDir)}

llm:
  model: gemini-2.5-flash   # GEMINI_API_KEY; claude-* takes ANTHROPIC_API_KEY, openai-* OPENAI_API_KEY (.env.example)

mcp_servers:
  # The built-in resources server over stdio: resources_list is read-only, resources_add and
  # resources_remove are destructive and wait for an approval.
  - name: resources
    command: ${quoted(process.execPath)}
    args: [${[asg, 'mcp-resources', '--db', join(dataDir, 'resources.db')].map(quoted).join(', ')}]
    required: true
`;
}

const ENV_EXAMPLE = `# The key of the provider your model uses (llm.model in agent.yaml); the others may stay empty.
# Copy to .env, fill in, and load it before \`asg up\`: set -a; . ./.env; set +a
GEMINI_API_KEY=          # gemini-* (the default model)
ANTHROPIC_API_KEY=       # claude-*
OPENAI_API_KEY=          # openai-*
MISTRAL_API_KEY=         # mistral-*
OPENROUTER_API_KEY=      # openrouter-*

# Each provider's endpoint can be moved (a proxy, a local model server):
# GEMINI_BASE_URL=https://generativelanguage.googleapis.com/v1beta
# ANTHROPIC_BASE_URL=https://api.anthropic.com/v1
# OPENAI_BASE_URL=https://api.openai.com/v1
# OLLAMA_BASE_URL=http://localhost:11434/v1   # ollama-* models, no key
`;

function readme(dir: string, root: string): string {
  return `# ${agentName(dir)}

An agent of Agent Stop and Go: it manages a list of named resources with the built-in resources
tool server, and stops before any change until a human approves it. \`asg\` below is the command
of the installed package; from a clone it is \`node ${join(root, 'bin', 'asg')}\`.

## Run it

\`\`\`sh
cp .env.example .env               # fill in the key of your model's provider
set -a; . ./.env; set +a
asg config check agent.yaml        # what a start would refuse, without starting
asg up                             # in this folder: agent.yaml on http://127.0.0.1:8080
\`\`\`

\`asg up\` takes \`agent.yaml\` from the current folder (or \`--config FILE\` from anywhere);
\`--port N\` moves it. \`asg dev\` runs it the same way and restarts it whenever you save
agent.yaml, keeping its conversations; a configuration with an error is reported and the last
good one keeps running.

## Talk to it, and approve

The web chat is at <http://127.0.0.1:8080/>: approvals show as cards with Approve and Reject.
From a shell, a request that changes something stops and returns at once:

\`\`\`sh
curl -s localhost:8080/conversations -H 'content-type: application/json' \\
  -d '{"message": "add resource web-1 with value 5"}'
\`\`\`

The answer says \`"waiting_approval": true\` and holds the approval's \`uuid\`. Decide it:

\`\`\`sh
asg approvals list                 # the pending approvals
asg approvals approve UUID         # or: asg approvals reject UUID --reason "not now"
\`\`\`

or over REST: \`curl -s localhost:8080/approvals/UUID -H 'content-type: application/json' -d '{"approved": true}'\`.
The call runs exactly as it was stored, and the agent answers.

## Make it yours

- \`prompt\` and \`llm.model\` in agent.yaml say who the agent is and which model it runs.
- \`mcp_servers\` lists its tools: any MCP server over stdio (\`command\`) or Streamable HTTP (\`url\`).
  A tool that does not say it is read-only waits for an approval.
- Your editor completes and checks agent.yaml through the schema named on its first line.
- data/ holds its conversations and approvals; delete it to start over.
`;
}

export function init(dirArgument: string | undefined, options: InitOptions = {}): void {
  const dir = resolve(dirArgument ?? '.');
  const root = packageRoot();
  const files: [string, string][] = [
    ['agent.yaml', agentYaml(dir, root)],
    ['.env.example', ENV_EXAMPLE],
    ['README.md', readme(dir, root)],
    // .env holds the provider's key once filled in; neither it nor the data belongs in a repository.
    ['.gitignore', '.env\ndata/\n'],
  ];
  const existing = files.map(([name]) => name).filter((name) => existsSync(join(dir, name)));
  if (existing.length > 0 && !options.force)
    fail(`${dir} already has ${existing.join(', ')}: nothing was written (--force overwrites them)`);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
  const here = resolve('.') === dir;
  process.stdout.write(
    `Wrote ${files.map(([name]) => name).join(', ')} in ${dir}.\nNext:\n${here ? '' : `  cd ${dir}\n`}  export GEMINI_API_KEY=...   # or another provider's key (.env.example)\n  asg up                       # or asg dev: restarts when agent.yaml changes\n`,
  );
}
