import { randomBytes } from 'node:crypto';
import { asArray, asObject, asString, estimateTokens } from './json.js';
import { sseEvent, textPieces } from './sse.js';
import type { ModelRequest, ParsedRequest, ScriptedToolCall, VendorWire, WireResponse, WireStream } from './types.js';

/**
 * The Gemini API's `models/{model}:generateContent`, as generativelanguage.googleapis.com
 * speaks it: key in `x-goog-api-key`, `contents[].parts[]` with `text`, `functionCall` (with
 * its `thoughtSignature` beside it when the model thought), `functionResponse`, and
 * `finishReason: "STOP"` even when the model calls a function.
 *
 * Streamed at `models/{model}:streamGenerateContent?alt=sse`: every event is a whole
 * GenerateContentResponse holding the next piece of text; function calls come whole; the
 * last event has the finish reason and usage; no end marker. Without `alt=sse` Gemini streams
 * one JSON array instead, which is not emulated (404).
 */
const PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  401: 'Request had invalid authentication credentials.',
  403: 'The caller does not have permission',
  404: 'Requested entity was not found.',
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'Internal error encountered.',
  503: 'The model is overloaded. Please try again later.',
};

function partsOf(content: unknown): Record<string, unknown>[] {
  return asArray(asObject(content).parts).map(asObject);
}

function textOf(parts: Record<string, unknown>[]): string {
  return parts.map((part) => asString(part.text)).join('');
}

/** The SDKs send a function's output as `response: {name, content}`; other clients send any object. */
function functionOutput(response: unknown): string {
  const content = asObject(response).content;
  return typeof content === 'string' ? content : JSON.stringify(response ?? {});
}

/** Gemini always sends `args` as an object; a scripted string is parsed when it is JSON, else sent as is. */
function argsOf(args: ScriptedToolCall['args']): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

function functionCallParts(calls: ScriptedToolCall[] | undefined): Record<string, unknown>[] {
  return (calls ?? []).map((call) => ({
    functionCall: { name: call.name, args: argsOf(call.args) },
    ...(call.thoughtSignature ? { thoughtSignature: call.thoughtSignature } : {}),
  }));
}

function usageOf(request: ModelRequest, parts: Record<string, unknown>[]): Record<string, number> {
  const promptTokens = estimateTokens(JSON.stringify(request.body));
  const outputTokens = estimateTokens(JSON.stringify(parts));
  return { promptTokenCount: promptTokens, candidatesTokenCount: outputTokens, totalTokenCount: promptTokens + outputTokens };
}

export const geminiWire: VendorWire = {
  provider: 'gemini',

  matchPath(path, query) {
    const match = PATH.exec(path);
    if (!match) return undefined;
    const stream = match[2] === 'streamGenerateContent';
    if (stream && new URLSearchParams(query).get('alt') !== 'sse') return undefined;
    return { model: decodeURIComponent(match[1]!), stream };
  },

  checkAuth(headers) {
    if (headers['x-goog-api-key']) return undefined;
    return {
      status: 403,
      body: {
        error: {
          code: 403,
          message:
            "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
          status: 'PERMISSION_DENIED',
        },
      },
    };
  },

  parseRequest(body, pathModel): ParsedRequest {
    const request = asObject(body);
    const contents = asArray(request.contents).map(asObject);
    const last = contents.at(-1);
    const lastParts = last ? partsOf(last) : [];
    const responses = last?.role === 'user' ? lastParts.filter((part) => part.functionResponse !== undefined) : [];
    const lastUser = contents
      .filter((content) => content.role === 'user' && partsOf(content).some((part) => typeof part.text === 'string'))
      .at(-1);
    return {
      provider: 'gemini',
      model: pathModel ?? '',
      system: textOf(partsOf(request.systemInstruction)),
      lastUserText: lastUser ? textOf(partsOf(lastUser)) : '',
      toolResults: responses.map((part) => {
        const response = asObject(part.functionResponse);
        return { name: asString(response.name), output: functionOutput(response.response) };
      }),
      tools: asArray(request.tools).flatMap((entry) =>
        asArray(asObject(entry).functionDeclarations).map((declaration) => asString(asObject(declaration).name)),
      ),
    };
  },

  renderReply(reply, request: ModelRequest): WireResponse {
    const parts: Record<string, unknown>[] = [];
    if (reply.text) parts.push({ text: reply.text });
    parts.push(...functionCallParts(reply.toolCalls));
    return {
      status: 200,
      body: {
        candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: usageOf(request, parts),
        modelVersion: request.model,
        responseId: randomBytes(12).toString('base64url'),
      },
    };
  },

  renderStream(reply, request: ModelRequest): WireStream {
    const responseId = randomBytes(12).toString('base64url');
    // Only the last chunk has a finish reason, and the usage of the whole answer.
    const chunk = (parts: Record<string, unknown>[], finalUsage?: Record<string, number>) =>
      sseEvent({
        candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finalUsage ? { finishReason: 'STOP' } : {}) }],
        ...(finalUsage ? { usageMetadata: finalUsage } : {}),
        modelVersion: request.model,
        responseId,
      });
    const calls = functionCallParts(reply.toolCalls);
    const content = textPieces(reply.text ?? '').map((piece) => chunk([{ text: piece }]));
    if (calls.length > 0) content.push(chunk(calls));
    const all = [...(reply.text ? [{ text: reply.text }] : []), ...calls];
    return { content, end: [chunk([{ text: '' }], usageOf(request, all))] };
  },

  renderStreamError(message) {
    return sseEvent({ error: { code: 503, message, status: 'UNAVAILABLE' } });
  },

  renderError(status, message) {
    const text = message ?? DEFAULT_MESSAGES[status] ?? `HTTP ${status}`;
    return { status, body: { error: { code: status, message: text, status: STATUS_NAMES[status] ?? 'UNKNOWN' } } };
  },
};
