import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';

/** A tool's answer as the broker returns it: text for the model, the error flag, structured data. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** Always an object: the proto carries a Struct (see `structuredObject`). */
  structuredContent?: Record<string, unknown>;
}

/** One content block as text: text as is, anything else a short bracketed summary. */
function contentText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}]`;
    case 'resource_link':
      return `[resource link ${block.uri}]`;
    case 'resource':
      // An embedded text resource is content the model should read; a binary one is not.
      return 'text' in block.resource
        ? block.resource.text
        : `[resource ${block.resource.uri}${block.resource.mimeType ? ` ${block.resource.mimeType}` : ''}]`;
    default:
      return `[${(block as { type: string }).type}]`;
  }
}

/**
 * SEP-2106 lets `structuredContent` be any JSON value; a Struct holds only objects, so any
 * other value travels wrapped as `{ "result": value }`, the wrap that SEP uses itself.
 */
export function structuredObject(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return { result: value };
}

export function toolOutcome(result: CallToolResult): ToolOutcome {
  const text = (result.content ?? []).map(contentText).join('\n');
  const structured = result.structuredContent;
  return {
    // The model reads only the text (the orchestrator passes nothing else on): a result whose
    // content says nothing carries its structured data as JSON, so the data is not lost.
    text: text.trim() === '' && structured !== undefined && structured !== null ? JSON.stringify(structured) : text,
    isError: result.isError === true,
    structuredContent: structuredObject(structured),
  };
}

interface SchemaIssue {
  path?: PropertyKey[];
  message?: string;
  code?: string;
  errors?: SchemaIssue[][];
}

/** For a union, the branch that came closest (fewest issues): for a text block without text, "text: expected string". */
function closestIssues(issue: SchemaIssue): SchemaIssue[] {
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return [issue];
  const branch = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
  return branch.flatMap((inner) => closestIssues({ ...inner, path: [...(issue.path ?? []), ...(inner.path ?? [])] }));
}

/**
 * Why the SDK refused a server's result, short and readable: its message carries the schema
 * issues as JSON ("Invalid result for tools/call: [{…}]"); they become "content: Invalid input:
 * expected array, received string". Anything else is kept as it is, cut to a sane length.
 */
export function invalidResultReason(message: string): string {
  const json = message.indexOf('[');
  if (json >= 0) {
    try {
      const issues = JSON.parse(message.slice(json)) as SchemaIssue[];
      const lines = issues
        .flatMap(closestIssues)
        .map((issue) => `${(issue.path ?? []).map(String).join('.') || 'result'}: ${issue.message ?? issue.code ?? 'invalid'}`);
      if (lines.length > 0) return lines.slice(0, 5).join('; ');
    } catch {
      // Not the JSON we expected: fall through to the message itself.
    }
  }
  const reason = message.replace(/^Invalid result for [\w/]+: /, '');
  return reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
}
