import type { z } from 'zod';

/**
 * How configuration files report a problem: the field's path as it is written in YAML
 * (`agent.agents[1].model`) and what was expected there. Shared by every config file the
 * project reads (the agent's, mcp-filesystem's), so their errors read alike.
 */

export function describeConfigPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

export function describeConfigIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_type':
      return `expected ${issue.expected}${issue.input === undefined ? ' (required)' : `, got ${Array.isArray(issue.input) ? 'array' : issue.input === null ? 'null' : typeof issue.input}`}`;
    case 'invalid_union':
      // A field that is missing is missing, whichever of its forms was expected (a duration: a number or a string).
      return issue.input === undefined ? 'expected a value (required)' : issue.message;
    case 'invalid_value':
      return `expected one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      // Zod's own messages ("Too small: …", "Invalid …") read well as they are; a schema's own say what was expected.
      return /^(Too|Invalid|expected)/.test(issue.message) ? issue.message : `expected ${issue.message}`;
  }
}
