import type { ModelRequest, ModelScript, ScriptedReply } from './types.js';

// Whole words only: "list" inside a name such as "list-2" is not a request to list.
const LIST = /(?<![\w.-])(?:list|show)(?![\w.-])/i;
// Lazy up to the name so that "with" in "... my-test with value 42" is not taken for the name.
const ADD = /\b(?:create|add|make)\b.*?\s([A-Za-z0-9][\w.-]*)\s+(?:with\s+)?value\s+(-?\d+(?:\.\d+)?)/i;
const REMOVE = /\b(?:remove|delete)\s+(?:the\s+)?(?:resource\s+)?([A-Za-z0-9][\w.-]*)/i;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function callIfOffered(request: ModelRequest, name: string, args: Record<string, unknown>): ScriptedReply {
  if (!request.tools.includes(name)) return { text: `I would use the ${name} tool, but it is not available to me.` };
  return { toolCalls: [{ name, args }] };
}

/**
 * A resource-manager model for the mcp-resources tools, deterministic enough for
 * end-to-end assertions. It reads only the last turn: tool results are reported back,
 * a user request becomes at most one tool call.
 */
export const resourceAgentScript: ModelScript = (request) => {
  if (request.toolResults.length > 0) {
    return { text: `Done. ${request.toolResults.map((result) => `${result.name}: ${result.output}`).join('\n')}` };
  }
  const text = request.lastUserText;
  if (LIST.test(text)) return callIfOffered(request, 'resources_list', {});
  const add = ADD.exec(text);
  if (add) return callIfOffered(request, 'resources_add', { name: add[1], value: Number(add[2]) });
  const remove = REMOVE.exec(text);
  if (remove) return callIfOffered(request, 'resources_remove', { pattern: `^${escapeRegExp(remove[1]!)}$` });
  return { text: 'I can list, add and remove resources.' };
};
