import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { z } from 'zod';
import { checkConfigFile, formatReport, type ConfigProblem, type ConfigReport } from '../common/config/check.js';
import { describeConfigIssue as describeIssue, describeConfigPath as describePath } from '../common/config/issues.js';

/**
 * The YAML configuration of mcp-filesystem:
 *
 * ```yaml
 * host: 127.0.0.1
 * port: 8091
 * max_full_read_size: 1048576
 * roots:
 *   - { name: workspace, path: ./data/workspace, create: true, allowed_tools: ["*"] }
 *   - { name: readonly, path: ./data/docs, allowed_tools: [read_file, list_folder, stat_file, grep, glob] }
 * ```
 */

/** The tools that act inside one root and so appear in `allowed_tools`; `list_roots` is always allowed. */
export const ROOT_TOOLS = [
  'list_folder',
  'read_file',
  'write_file',
  'remove_file',
  'patch_file',
  'create_folder',
  'remove_folder',
  'stat_file',
  'hash_file',
  'permissions_file',
  'copy',
  'move',
  'grep',
  'glob',
] as const;
export type RootToolName = (typeof ROOT_TOOLS)[number];

/** What a root allows when its entry names no `allowed_tools`: looking, never touching. */
export const READ_ONLY_TOOLS: readonly RootToolName[] = [
  'list_folder',
  'read_file',
  'stat_file',
  'hash_file',
  'permissions_file',
  'grep',
  'glob',
];

const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8091;
const DEFAULT_MAX_FULL_READ_SIZE = 1_048_576;

const rootSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a name of up to 64 letters, digits, "_", "." or "-"'),
  path: z.string().min(1, 'a folder path'),
  /** Make the folder (and its parents) when the server starts, so that a fresh clone's workspace needs no `mkdir`. */
  create: z.boolean().default(false),
  allowed_tools: z.array(z.enum([...ROOT_TOOLS, '*'])).default([...READ_ONLY_TOOLS]),
});

export const filesystemFileSchema = z
  .strictObject({
    host: z.string().min(1).default(DEFAULT_HOST),
    port: z.number().int().min(0).max(65535).default(DEFAULT_PORT),
    max_full_read_size: z.number().int().positive().default(DEFAULT_MAX_FULL_READ_SIZE),
    roots: z.array(rootSchema).min(1, 'at least one root'),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.roots.forEach((root, index) => {
      if (seen.has(root.name))
        ctx.addIssue({
          code: 'custom',
          path: ['roots', index, 'name'],
          message: `expected a unique root name ("${root.name}" is used twice)`,
        });
      seen.add(root.name);
    });
  });

export type FilesystemConfigFile = z.output<typeof filesystemFileSchema>;

/** A root as the sandbox uses it: its real absolute path (symlinks resolved) and the tools it allows. */
export interface RootConfig {
  name: string;
  /** `realpath` of the configured folder; every path the tools touch lies at or below it. */
  real: string;
  allowed: ReadonlySet<RootToolName>;
}

export interface FilesystemConfig {
  host: string;
  port: number;
  max_full_read_size: number;
  roots: RootConfig[];
}

export class FilesystemConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilesystemConfigError';
  }
}

/**
 * What to do with a root marked `create: true` whose folder is missing: a start makes it, a check
 * (which changes nothing on disk) takes the path as it will be.
 */
type MissingRoots = 'make' | 'accept';

/**
 * Checks the parsed YAML and turns each root's folder into its real path. Every problem is one
 * line `file: field: what was expected`, all of them at once.
 */
export function parseFilesystemConfig(
  raw: unknown,
  file: string,
  cwd = process.cwd(),
  missingRoots: MissingRoots = 'make',
): FilesystemConfig {
  const result = filesystemFileSchema.safeParse(raw ?? {}, { reportInput: true });
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${file}: ${describePath(issue.path)}: ${describeIssue(issue)}`);
    throw new FilesystemConfigError(`invalid mcp-filesystem configuration\n${lines.join('\n')}`);
  }
  const problems: string[] = [];
  const roots: RootConfig[] = [];
  result.data.roots.forEach((root, index) => {
    const field = `${file}: roots[${index}].path`;
    let real: string;
    // Relative to the working directory, like every path of the agent's own configuration.
    const path = resolve(cwd, root.path);
    try {
      if (root.create && missingRoots === 'make') mkdirSync(path, { recursive: true });
      real = realpathSync(path);
    } catch (error) {
      if (root.create && missingRoots === 'accept' && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        roots.push({ name: root.name, real: path, allowed: allowedTools(root.allowed_tools) });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      problems.push(
        code === 'ENOENT'
          ? `${field}: "${root.path}" does not exist (create the folder first, or set create: true)`
          : `${field}: "${root.path}" cannot be resolved (${code ?? 'error'})`,
      );
      return;
    }
    if (!statSync(real).isDirectory()) {
      problems.push(`${field}: "${root.path}" is not a folder`);
      return;
    }
    roots.push({ name: root.name, real, allowed: allowedTools(root.allowed_tools) });
  });
  // A root inside another would let the outer root's tools reach past the inner root's allowlist.
  for (const inner of roots) {
    for (const outer of roots) {
      if (inner === outer) continue;
      const nested = inner.real === outer.real || inner.real.startsWith(outer.real.endsWith(sep) ? outer.real : outer.real + sep);
      if (nested) {
        const index = result.data.roots.findIndex((root) => root.name === inner.name);
        problems.push(`${file}: roots[${index}].path: root "${inner.name}" lies inside root "${outer.name}"; roots may not overlap`);
      }
    }
  }
  if (problems.length > 0) throw new FilesystemConfigError(`invalid mcp-filesystem configuration\n${[...new Set(problems)].join('\n')}`);
  return { host: result.data.host, port: result.data.port, max_full_read_size: result.data.max_full_read_size, roots };
}

function allowedTools(names: readonly (RootToolName | '*')[]): ReadonlySet<RootToolName> {
  return new Set<RootToolName>(names.includes('*') ? ROOT_TOOLS : (names as RootToolName[]));
}

/**
 * The file's configuration, checked as `asg config check` checks it: YAML and fields with line,
 * column and "did you mean" (check.ts), then the roots on disk (parseFilesystemConfig).
 */
export function loadFilesystemConfig(file: string, cwd = process.cwd()): FilesystemConfig {
  const report = loadFilesystemConfigReport(file, cwd);
  if (!report.config) throw new FilesystemConfigError(`invalid mcp-filesystem configuration\n${formatReport(report)}`);
  return parseFilesystemConfig(report.config, file, cwd);
}

/** What `asg mcp-filesystem` and `asg config check` say of the file. */
export function loadFilesystemConfigReport(file: string, cwd = process.cwd()): ConfigReport<FilesystemConfigFile> {
  return checkConfigFile(file, filesystemFileSchema, { checks: [rootsCheck(file, cwd)] });
}

/** The roots' folders: each exists, is a folder, and lies inside no other root. */
function rootsCheck(file: string, cwd = process.cwd()) {
  return (config: FilesystemConfigFile): { errors: ConfigProblem[] } => {
    try {
      parseFilesystemConfig(config, file, cwd, 'accept');
      return { errors: [] };
    } catch (error) {
      if (!(error instanceof FilesystemConfigError)) throw error;
      // Lines "file: roots[2].path: what is wrong", after the heading.
      const errors = error.message
        .split('\n')
        .slice(1)
        .map((line): ConfigProblem => {
          const match = /^.*?: roots\[(\d+)\]\.(\w+): (.*)$/.exec(line);
          return match ? { path: ['roots', Number(match[1]), match[2]!], message: match[3]! } : { message: line };
        });
      return { errors };
    }
  };
}
