import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { configuredModels } from './configured-models.js';
import { describeConfigIssue, describeConfigPath } from './issues.js';
import { baseUrlError, ModelNameError, resolveModel, ROUTES, type ModelRoute } from './models.js';
import { configSchema, type AgentConfig } from './schema.js';
import { nearest } from './suggest.js';

/**
 * The one check of a configuration file: `asg config check` and every start
 * (`asg up`, `asg serve`) run this and print what it finds in the same words, so a file
 * that passes the check starts and one that fails it does not. Each problem names the file,
 * line and column (YAML syntax, schema, model names), with a code frame and, for a misspelt
 * key, value or model prefix, the nearest known one.
 */

export type ConfigPath = readonly (string | number)[];

/** What a check found, at a place in the file when it has one. */
export interface ConfigProblem {
  /** Where in the configuration, e.g. ['llm', 'model']; absent for the whole file. */
  path?: ConfigPath;
  message: string;
  /** The likely intended spelling ("did you mean"). */
  suggestion?: string;
  /** The agent-tree node the problem is about, named beside its path. */
  node?: string;
  /** Point at the last key of `path` rather than its value (an unknown field). */
  atKey?: boolean;
  /** Point this many characters into the string value at `path` (where an expression in it goes wrong). */
  offset?: number;
  /** Set by the check: where the problem is in the file (1-based) and the lines around it. */
  line?: number;
  column?: number;
  frame?: string;
}

export interface ConfigReport<T> {
  file: string;
  /** Present when there are no errors. */
  config?: T;
  errors: ConfigProblem[];
  /** Problems that do not stop a start (a provider key that is not set: its models fail on use). */
  warnings: ConfigProblem[];
}

/** Checks of a parsed configuration against its environment (keys, secrets, bind rules). */
export type ConfigCheck<T> = (config: T, env: NodeJS.ProcessEnv) => { errors?: ConfigProblem[]; warnings?: ConfigProblem[] };

export interface CheckOptions<T> {
  env?: NodeJS.ProcessEnv;
  checks?: readonly ConfigCheck<T>[];
}

/** Reads and checks `file` against `schema`; an unreadable file is one error. */
export function checkConfigFile<T>(file: string, schema: z.ZodType<T>, options: CheckOptions<T> = {}): ConfigReport<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return {
      file,
      errors: [{ message: `cannot read the configuration file (${(error as NodeJS.ErrnoException).code ?? String(error)})` }],
      warnings: [],
    };
  }
  return checkConfigText(text, file, schema, options);
}

export function checkConfigText<T>(text: string, file: string, schema: z.ZodType<T>, options: CheckOptions<T> = {}): ConfigReport<T> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lines = text.split(/\r?\n/);
  const place = (problem: ConfigProblem, offsets: [number, number] | undefined): ConfigProblem => {
    if (!offsets) return problem;
    const start = lineCounter.linePos(offsets[0]);
    const end = lineCounter.linePos(Math.max(offsets[0], offsets[1]));
    const width =
      end.line === start.line ? Math.max(1, end.col - start.col) : Math.max(1, (lines[start.line - 1]?.length ?? 0) - start.col + 1);
    return { ...problem, line: start.line, column: start.col, frame: codeFrame(lines, start.line, start.col, width) };
  };
  if (doc.errors.length > 0) {
    const errors = doc.errors.map((error) =>
      place({ message: `not valid YAML: ${error.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '')}` }, [error.pos[0], error.pos[1]]),
    );
    return { file, errors, warnings: [] };
  }
  const located = (problem: ConfigProblem, exact = false) => {
    const range = problem.path ? locate(doc, problem.path, problem.atKey, exact) : undefined;
    const inside = range && problem.path && problem.offset !== undefined ? insideValue(doc, text, problem.path, problem.offset) : undefined;
    return place(problem, inside ?? range);
  };
  const result = schema.safeParse(doc.toJS() ?? {}, { reportInput: true });
  if (!result.success)
    return {
      file,
      errors: result.error.issues.flatMap((issue) => schemaProblems(issue, schema)).map((problem) => located(problem)),
      warnings: [],
    };
  const env = options.env ?? process.env;
  const errors: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  for (const check of options.checks ?? []) {
    const found = check(result.data, env);
    errors.push(...(found.errors ?? []));
    warnings.push(...(found.warnings ?? []));
  }
  const exactly = (problem: ConfigProblem) => located(problem, true);
  return { file, config: errors.length === 0 ? result.data : undefined, errors: errors.map(exactly), warnings: warnings.map(exactly) };
}

/** The report as the CLI prints it: one block per problem, `file:line:column: path: message`, then its code frame. */
export function formatReport(report: ConfigReport<unknown>): string {
  const block = (problem: ConfigProblem, kind: 'error' | 'warning') => {
    const where = problem.line === undefined ? report.file : `${report.file}:${problem.line}:${problem.column}`;
    const node = problem.node === undefined ? '' : ` (node "${problem.node}")`;
    const path = problem.path && problem.path.length > 0 ? `${describeConfigPath(problem.path)}${node}: ` : '';
    const hint = problem.suggestion && !problem.message.includes('did you mean') ? ` (did you mean "${problem.suggestion}"?)` : '';
    // A warning is one line: it does not stop anything, and a start prints it too.
    const frame = problem.frame && kind === 'error' ? `\n${problem.frame}` : '';
    return `${where}: ${kind === 'warning' ? 'warning: ' : ''}${path}${problem.message}${hint}${frame}`;
  };
  return [...report.errors.map((problem) => block(problem, 'error')), ...report.warnings.map((problem) => block(problem, 'warning'))].join(
    '\n',
  );
}

/** The agent configuration's own check: the schema, the model names, and the provider keys. */
export function checkAgentConfigFile(file: string, options: CheckOptions<AgentConfig> = {}): ConfigReport<AgentConfig> {
  return checkConfigFile(file, configSchema, { ...options, checks: [checkModels, ...(options.checks ?? [])] });
}

/**
 * Every model name the configuration routes (`llm.model`, each llm node's `model`): one that
 * routes nowhere is an error; a provider whose key is not set is a warning naming the models
 * it breaks (validation is lazy: they fail on use); a base URL variable that is not an
 * http(s) URL is an error, as in the llm-gateway.
 */
export const checkModels: ConfigCheck<AgentConfig> = (config, env) => {
  const errors: ConfigProblem[] = [];
  const missingKey = new Map<string, { path: ConfigPath; models: Set<string> }>();
  const notices: ConfigProblem[] = [];
  for (const { model, path } of configuredModels(config)) {
    let route: ModelRoute;
    try {
      route = resolveModel(model);
    } catch (error) {
      if (!(error instanceof ModelNameError)) throw error;
      errors.push({ path, message: error.message });
      continue;
    }
    if (route.notice) notices.push({ path, message: route.notice });
    if (route.keyEnv && !env[route.keyEnv]?.trim()) {
      const entry = missingKey.get(route.keyEnv) ?? { path, models: new Set<string>() };
      missingKey.set(route.keyEnv, entry);
      entry.models.add(route.model);
    }
  }
  for (const route of Object.values(ROUTES)) {
    const problem = baseUrlError(route, env);
    if (problem) errors.push({ message: problem });
  }
  const warnings = [
    ...notices,
    ...[...missingKey].map(([keyEnv, { path, models }]) => ({
      path,
      message: `${keyEnv} is not set; models ${[...models].join(', ')} will fail`,
    })),
  ];
  return { errors, warnings };
};

/** One problem per zod issue, one per key for unknown keys (each is at its own place), with suggestions. */
function schemaProblems(issue: z.core.$ZodIssue, schema: z.ZodType): ConfigProblem[] {
  const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, path).filter((key) => !issue.keys.includes(key));
    return issue.keys.map((key) => ({
      path: [...path, key],
      message: `unknown field "${key}"`,
      suggestion: nearest(key, known),
      atKey: true,
    }));
  }
  if (issue.code === 'invalid_value' && typeof issue.input === 'string') {
    return [{ path, message: describeConfigIssue(issue), suggestion: nearest(issue.input, issue.values.map(String)) }];
  }
  // Agent-tree problems name the node beside its path and say the whole rule themselves.
  const node = issue.code === 'custom' ? (issue.params?.node as string | undefined) : undefined;
  if (node !== undefined) return [{ path, node, message: issue.message }];
  // A missing field has no place of its own: locate() shows the object that lacks it.
  return [{ path, message: describeConfigIssue(issue) }];
}

/**
 * The keys an object at `path` of the schema accepts, for "did you mean". Walks the schema
 * through zod's public accessors: wrappers (optional, default, lazy, pipes…), arrays, records
 * and unions.
 */
export function knownKeys(schema: z.ZodType, path: ConfigPath): string[] {
  const objects = (type: unknown, rest: ConfigPath): string[] => {
    if (type instanceof z.ZodObject) {
      const shape = type.shape as Record<string, unknown>;
      if (rest.length === 0) return Object.keys(shape);
      const next = shape[String(rest[0])];
      return next ? objects(next, rest.slice(1)) : [];
    }
    if (
      type instanceof z.ZodOptional ||
      type instanceof z.ZodDefault ||
      type instanceof z.ZodPrefault ||
      type instanceof z.ZodNullable ||
      type instanceof z.ZodReadonly ||
      type instanceof z.ZodCatch ||
      type instanceof z.ZodLazy
    ) {
      return objects(type.unwrap(), rest);
    }
    if (type instanceof z.ZodPipe) return objects(type.in, rest);
    if (type instanceof z.ZodArray) return typeof rest[0] === 'number' ? objects(type.element, rest.slice(1)) : [];
    if (type instanceof z.ZodRecord) return rest.length > 0 ? objects(type.valueType, rest.slice(1)) : [];
    if (type instanceof z.ZodUnion) return [...new Set((type.options as readonly unknown[]).flatMap((option) => objects(option, rest)))];
    return [];
  };
  return objects(schema, path);
}

/**
 * The offsets of what `path` points at in the document: a key's value, or for a key that is
 * not there (`exact` false: a missing field) the nearest object above it. With `exact`,
 * undefined when the path is not in the file: a default the environment cannot serve (the
 * default model without its key) has no line of its own.
 */
function locate(doc: Document, path: ConfigPath, atKey = false, exact = false): [number, number] | undefined {
  let node: unknown = doc.contents;
  let found: [number, number] | undefined = rangeOf(node);
  for (const [index, part] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === part);
      if (!pair) return exact ? undefined : found;
      const isLast = index === path.length - 1;
      // An unknown key, or one holding a whole block (which may be long), is shown at the key; a value at the value.
      const value = rangeOf(pair.value);
      found = isLast && (atKey || isBlockOrEmpty(pair.value)) ? rangeOf(pair.key) : (value ?? rangeOf(pair.key));
      node = pair.value;
    } else if (isSeq(node) && typeof part === 'number' && node.items[part] !== undefined) {
      node = node.items[part];
      found = rangeOf(node) ?? found;
    } else {
      return exact ? undefined : found;
    }
  }
  return found;
}

/**
 * Where the character `offset` of the string value at `path` is in the file: after the quote of
 * a quoted scalar, on the lines of a block scalar (`|`, `>`), or into a plain one. Escapes in a
 * quoted value are not unfolded: a position after one is off by the escape's extra characters.
 */
function insideValue(doc: Document, text: string, path: ConfigPath, offset: number): [number, number] | undefined {
  const value = doc.getIn(path, true);
  if (!isScalar(value) || typeof value.value !== 'string' || !value.range) return undefined;
  const start = value.range[0];
  switch (value.type) {
    case 'QUOTE_DOUBLE':
    case 'QUOTE_SINGLE':
      return [start + 1 + offset, start + 2 + offset];
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED': {
      // The content starts on the line after the header, indented; its lines are the value's lines.
      let at = text.indexOf('\n', start) + 1;
      if (at === 0) return undefined;
      const indent = /^ */.exec(text.slice(at))![0].length;
      const lines = value.value.slice(0, offset).split('\n');
      for (const line of lines.slice(0, -1)) at += indent + line.length + 1;
      const column = at + indent + lines.at(-1)!.length;
      return [column, column + 1];
    }
    default:
      return [start + offset, start + offset + 1];
  }
}

function isBlockOrEmpty(value: unknown): boolean {
  return isMap(value) || isSeq(value) || (isScalar(value) && value.value === null);
}

function rangeOf(node: unknown): [number, number] | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range ? [range[0], range[1]] : undefined;
}

/** Two lines before, the line with a caret under the problem, one line after. */
function codeFrame(lines: readonly string[], line: number, column: number, width: number): string {
  const first = Math.max(1, line - 2);
  const last = Math.min(lines.length, line + 1);
  const gutter = String(last).length;
  const out: string[] = [];
  for (let number = first; number <= last; number++) {
    const text = lines[number - 1] ?? '';
    out.push(`${number === line ? '>' : ' '} ${String(number).padStart(gutter)} | ${text}`.trimEnd());
    if (number === line)
      out.push(`  ${' '.repeat(gutter)} | ${' '.repeat(column - 1)}${'^'.repeat(Math.min(width, Math.max(1, text.length - column + 1)))}`);
  }
  return out.join('\n');
}
