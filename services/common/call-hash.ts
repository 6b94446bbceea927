import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal values always give equal text. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/**
 * The fingerprint of a gated call, fixed when its approval is created and checked again
 * right before it runs (the approved call is the stored call).
 */
export function callHash(toolName: string, toolArgs: Record<string, unknown>): string {
  return createHash('sha256')
    .update(canonicalJson({ tool_name: toolName, tool_args: toolArgs }))
    .digest('hex');
}
