import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';

/** A tool's answer as the broker returns it: text for the model, the error flag, structured data. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** Always an object: the proto carries a Struct (see `structuredObject`). */
  structuredContent?: Record<string, unknown>;
}

/** One content block as text: text as is, anything else a short bracketed summary. */
export function contentText(block: ContentBlock): string {
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
      return 'text' in block.resource ? block.resource.text : `[resource ${block.resource.uri}${block.resource.mimeType ? ` ${block.resource.mimeType}` : ''}]`;
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
  return {
    text: (result.content ?? []).map(contentText).join('\n'),
    isError: result.isError === true,
    structuredContent: structuredObject(result.structuredContent),
  };
}
