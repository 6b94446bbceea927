import { z } from 'zod';
import { OpenAiError } from './errors.js';
import type { HistoryMessage } from './history.js';

/**
 * What the OpenAI-compatible face accepts, checked at the edge with a clear error for anything else.
 * The zod schemas are exported for the API reference; the parser turns a body into what the
 * face needs, or throws OpenAiError (400) naming the field that is wrong.
 *
 * Strict: a field OpenAI's Chat Completions API does not define is refused, by name. The
 * standard fields clients send are accepted; those that steer a model's sampling or tools
 * (temperature, max_tokens, tools, response_format, …) do not apply to an agent, which runs its
 * own configured model with its own tools, and are ignored (docs/api.md, "OpenAI-compatible API").
 */

/** The header that names the conversation to continue; the answer carries it too. */
export const CONVERSATION_HEADER = 'X-Conversation-Id';

/** A conversation id as the store makes them: generous bounds, no parsing. */
const conversationId = z.string().trim().min(1, 'must not be empty').max(200, 'must be a conversation id');

const textPart = z.object({ type: z.literal('text'), text: z.string() });
// Non-text parts (images, audio, files) are named in the error: the agent reads text only.
const contentPart = z.union([textPart, z.looseObject({ type: z.string() })]);

const messageContent = z.union([z.string(), z.array(contentPart)]).nullish();

const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function'], {
    error: 'must be one of system, developer, user, assistant, tool, function',
  }),
  content: messageContent,
});

/** Fields clients send that do not apply to an agent: accepted, ignored. */
const ignored = {
  frequency_penalty: z.unknown().optional(),
  function_call: z.unknown().optional(),
  functions: z.unknown().optional(),
  logit_bias: z.unknown().optional(),
  logprobs: z.unknown().optional(),
  max_completion_tokens: z.unknown().optional(),
  max_tokens: z.unknown().optional(),
  metadata: z.unknown().optional(),
  modalities: z.unknown().optional(),
  parallel_tool_calls: z.unknown().optional(),
  prediction: z.unknown().optional(),
  presence_penalty: z.unknown().optional(),
  prompt_cache_key: z.unknown().optional(),
  reasoning_effort: z.unknown().optional(),
  response_format: z.unknown().optional(),
  safety_identifier: z.unknown().optional(),
  seed: z.unknown().optional(),
  service_tier: z.unknown().optional(),
  stop: z.unknown().optional(),
  store: z.unknown().optional(),
  temperature: z.unknown().optional(),
  tool_choice: z.unknown().optional(),
  tools: z.unknown().optional(),
  top_logprobs: z.unknown().optional(),
  top_p: z.unknown().optional(),
  verbosity: z.unknown().optional(),
  web_search_options: z.unknown().optional(),
  audio: z.unknown().optional(),
};

/** `POST /v1/chat/completions`. */
export const chatCompletionRequestSchema = z.strictObject({
  model: z.string({ error: "is required: the agent's model id (GET /v1/models)" }).min(1, 'must not be empty'),
  messages: z.array(message, { error: 'is required: an array of messages' }).min(1, 'must hold at least one message'),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  /** The conversation to continue (docs/api.md); the X-Conversation-Id header wins over it. */
  user: conversationId.nullish(),
  /** One answer per request: an agent's turn has one outcome. */
  n: z.literal(1, { error: 'must be 1: an agent answers each message once' }).nullish(),
  ...ignored,
});

/** The names of the ignored fields, for the documentation. */
export const IGNORED_REQUEST_FIELDS = Object.keys(ignored).sort();

/** What a request asks of the agent. */
export interface ChatCompletionRequest {
  model: string;
  /** The last user message's text: the new input of the turn. */
  input: string;
  stream: boolean;
  /** The conversation to continue; absent: the one whose history the request resends (history.ts), or a new one. */
  conversationId?: string;
  /** The user and assistant messages before the input, as the client shows them. */
  history: HistoryMessage[];
  /** Streaming: `stream_options.include_usage`, a last chunk with the usage and no choices. */
  includeUsage: boolean;
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join('');
}

function problemOf(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    const where = issue.path.length ? ` in ${fieldPath(issue.path)}` : '';
    return {
      message: `unknown field${issue.keys.length > 1 ? 's' : ''}${where}: ${keys}; the Chat Completions API defines no such field`,
      param: issue.keys[0] ?? null,
    };
  }
  const param = issue.path.length ? fieldPath(issue.path) : null;
  return { message: param ? `${param} ${issue.message}` : issue.message, param };
}

function textOf(content: z.infer<typeof messageContent>, index: number): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, partIndex) => {
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      throw new OpenAiError(
        400,
        `messages[${index}].content[${partIndex}] is a "${part.type}" part; the agent reads text parts only`,
        `messages[${index}].content[${partIndex}].type`,
      );
    })
    .join('\n');
}

/** An earlier message's text as the client shows it: its text parts (others, an image shown earlier, are not the agent's concern). */
function shownTextOf(content: z.infer<typeof messageContent>): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/**
 * Reads a request body. `headerConversation` is the X-Conversation-Id header: it picks the
 * conversation to continue and wins over `user`.
 */
export function parseChatCompletionRequest(body: unknown, headerConversation?: string): ChatCompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new OpenAiError(400, 'the body must be a JSON object: a Chat Completions request');
  const parsed = chatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) {
    const { message, param } = problemOf(parsed.error);
    throw new OpenAiError(400, message, param);
  }
  const { model, messages, stream, stream_options: streamOptions, user } = parsed.data;
  const lastUser = messages.findLastIndex((candidate) => candidate.role === 'user');
  if (lastUser < 0)
    throw new OpenAiError(400, 'messages holds no user message: the last user message is what the agent is asked', 'messages');
  const input = textOf(messages[lastUser]!.content, lastUser);
  if (input.trim() === '')
    throw new OpenAiError(400, `messages[${lastUser}] (the last user message) has no text`, `messages[${lastUser}].content`);
  let fromHeader: string | undefined;
  if (headerConversation !== undefined) {
    const header = conversationId.safeParse(headerConversation);
    if (!header.success)
      throw new OpenAiError(400, `the ${CONVERSATION_HEADER} header ${header.error.issues[0]!.message}`, CONVERSATION_HEADER);
    fromHeader = header.data;
  }
  const chosen = fromHeader ?? user ?? undefined;
  const history: HistoryMessage[] = [];
  for (const earlier of messages.slice(0, lastUser))
    if (earlier.role === 'user' || earlier.role === 'assistant') history.push({ role: earlier.role, text: shownTextOf(earlier.content) });
  return {
    model,
    input,
    stream: stream === true,
    history,
    includeUsage: stream === true && streamOptions?.include_usage === true,
    ...(chosen !== undefined && { conversationId: chosen }),
  };
}
