import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type ModelMessage,
  type ToolCallPart as SdkToolCallPart,
  type ToolResultPart as SdkToolResultPart,
  type ToolSet,
} from 'ai';
import { ChatRole, type ChatMessage, type GenerateRequest, type ToolDefinition } from '../../gen/ts/asg/llm/v1/llm.js';
import { invalidArgument } from '../common/grpc/errors.js';

type ProviderOptions = NonNullable<SdkToolCallPart['providerOptions']>;

/** A Generate request in the AI SDK's terms. */
export interface ModelPrompt {
  system?: string;
  messages: ModelMessage[];
  /** Absent when no tool is offered. */
  tools?: ToolSet;
}

interface OpenCall {
  id: string;
  name: string;
  /** Index of the assistant message that made the call, for error messages. */
  message: number;
}

/**
 * Translates the proto conversation. Providers reject a tool call without its result and a
 * result without its call, so pairing is checked here and reported as INVALID_ARGUMENT naming
 * the message, rather than as a provider 400 or an SDK error.
 */
export function toModelPrompt(request: GenerateRequest): ModelPrompt {
  if (request.messages.length === 0) throw invalidArgument(`no messages for model ${request.model}: send at least the user's message`);
  const messages: ModelMessage[] = [];
  let openCalls: OpenCall[] = [];

  const requireAnswered = (index: number): void => {
    const call = openCalls[0];
    if (call)
      throw invalidArgument(
        `message ${index}: tool call ${call.name} (id "${call.id}") of message ${call.message} has no tool result before it`,
      );
  };

  request.messages.forEach((message, index) => {
    switch (message.role) {
      case ChatRole.CHAT_ROLE_USER:
        requireAnswered(index);
        messages.push({ role: 'user', content: message.text });
        break;
      case ChatRole.CHAT_ROLE_ASSISTANT: {
        requireAnswered(index);
        const calls = message.toolCalls.map((call, position) => toolCallOf(call.id || `call-${index}-${position}`, call, index));
        openCalls = calls.map((call) => ({ id: call.toolCallId, name: call.toolName, message: index }));
        messages.push({ role: 'assistant', content: [...(message.text ? [{ type: 'text' as const, text: message.text }] : []), ...calls] });
        break;
      }
      case ChatRole.CHAT_ROLE_TOOL:
        messages.push({
          role: 'tool',
          content: message.toolResults.map((result) => toolResultOf(result, claimCall(openCalls, result, index))),
        });
        break;
      default:
        throw invalidArgument(`message ${index} has no role: expected user, assistant or tool`);
    }
  });
  requireAnswered(request.messages.length);

  return {
    ...(request.systemPrompt ? { system: request.systemPrompt } : {}),
    messages,
    ...(request.tools.length > 0 ? { tools: toToolSet(request.tools) } : {}),
  };
}

/** Finds (and removes) the open call a result answers: by id, or by name when the result has no id. */
function claimCall(openCalls: OpenCall[], result: ChatMessage['toolResults'][number], index: number): OpenCall {
  const position = result.id
    ? openCalls.findIndex((call) => call.id === result.id)
    : openCalls.findIndex((call) => call.name === result.name);
  const call = openCalls[position];
  if (!call || (result.name && result.name !== call.name)) {
    throw invalidArgument(
      `message ${index}: tool result for ${result.name || '(no name)'} (id "${result.id}") answers no tool call of the preceding assistant message`,
    );
  }
  openCalls.splice(position, 1);
  return call;
}

function toolCallOf(id: string, call: ChatMessage['toolCalls'][number], index: number): SdkToolCallPart {
  const providerOptions = providerOptionsOf(call.providerMetadataJson, `message ${index}: tool call ${call.name} (id "${id}")`);
  return {
    type: 'tool-call',
    toolCallId: id,
    toolName: call.name,
    input: argumentsObject(call.argumentsJson),
    ...(providerOptions ? { providerOptions } : {}),
  };
}

/**
 * The provider state a reply carried with this call (reply.ts), handed back as the part's
 * provider options: the SDK then sends it as the vendor expects, e.g. Gemini's
 * `thoughtSignature` beside its `functionCall`, which Gemini requires unchanged.
 */
function providerOptionsOf(json: string | undefined, where: string): ProviderOptions | undefined {
  if (json === undefined || json.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed) || !Object.values(parsed).every(isObject)) {
    throw invalidArgument(
      `${where}: provider_metadata_json must be a JSON object of per-provider objects, as a reply gave it (e.g. {"google":{"thoughtSignature":"…"}})`,
    );
  }
  return parsed as ProviderOptions;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Arguments as the providers take them back: an object (Gemini's `functionCall.args` is a
 * Struct; the OpenAI client re-serialises the object). Arguments that were not a JSON object
 * when the model produced them go back as `{}`: the tool result that follows already tells the
 * model what was wrong with them.
 */
function argumentsObject(argumentsJson: string): Record<string, unknown> {
  if (argumentsJson.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function toolResultOf(result: ChatMessage['toolResults'][number], call: OpenCall): SdkToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: call.id,
    toolName: call.name,
    output: result.isError ? { type: 'error-text', value: result.output } : { type: 'text', value: result.output },
  };
}

/**
 * Tools without `execute`: the SDK hands every call back to us instead of running it, which
 * is what the approval gate needs.
 */
function toToolSet(definitions: readonly ToolDefinition[]): ToolSet {
  const tools: ToolSet = {};
  for (const definition of definitions) {
    if (!definition.name) throw invalidArgument('a tool definition has no name');
    if (Object.hasOwn(tools, definition.name)) throw invalidArgument(`tool ${definition.name} is offered twice`);
    // Providers want an object schema; an MCP tool without one takes no arguments.
    const schema = { type: 'object', ...(definition.inputSchema ?? {}) } as JSONSchema7;
    tools[definition.name] = tool({ description: definition.description, inputSchema: jsonSchema(schema) });
  }
  return tools;
}
