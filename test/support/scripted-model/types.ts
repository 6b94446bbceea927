/** What a scripted model sees of one request, the same for every vendor's wire format. */
export interface ModelRequest {
  provider: 'gemini' | 'anthropic' | 'openai' | 'mistral' | 'ollama' | 'openrouter';
  /** The request path, e.g. /v1beta/models/gemini-2.5-flash:generateContent. */
  path: string;
  /**
   * The query string with its "?", e.g. "?alt=sse"; empty when there is none. Always set by the
   * server (as is `stream`); optional so that a script can be called with a request made by hand.
   */
  query?: string;
  /** Whether the request asked for a streamed answer: Gemini by its path, the others by `"stream": true`. */
  stream?: boolean;
  /**
   * How a streamed answer ended, set when it ends: every scripted event was sent ("complete"),
   * the connection was dropped as scripted ("dropped"), or the client closed it before the
   * last event ("client-closed"). Undefined while the answer is being sent and for answers
   * that were not streamed.
   */
  streamEnd?: 'complete' | 'dropped' | 'client-closed';
  /** The model as the vendor received it: from the Gemini path, from the body for the others. */
  model: string;
  system: string;
  /** Text of the last user turn. */
  lastUserText: string;
  /** Tool results in the last turn, if the last turn is tool results. */
  toolResults: { name: string; output: string }[];
  /** Names of the tools offered. */
  tools: string[];
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The parsed JSON body, exactly as sent. */
  body: unknown;
}

export interface ScriptedToolCall {
  name: string;
  /** An object is sent as the vendor sends arguments; a string is sent as is, even if it is not JSON. */
  args: Record<string, unknown> | string;
  /** Gemini only: the opaque `thoughtSignature` sent beside the `functionCall`, which Gemini wants back unchanged. */
  thoughtSignature?: string;
}

/** How a streamed answer is sent; ignored when the request did not ask for a stream. */
export interface StreamScript {
  /** Milliseconds before each event after the first, so that a test can act while the answer is still coming. */
  delayMs?: number;
  /**
   * Instead of the end of the answer (finish reason, usage), after its text and tool calls: the
   * vendor's in-stream error event saying `errorEvent`, or ("drop") the connection closed with no end at all.
   */
  breakOff?: { errorEvent: string } | 'drop';
}

export type ScriptedReply =
  | { text: string; stream?: StreamScript }
  | { toolCalls: ScriptedToolCall[]; text?: string; stream?: StreamScript }
  /**
   * An HTTP error (or any status) with the vendor's error body, saying `message` when given, unless
   * `body` is given; a string body is sent raw.
   */
  | { httpStatus: number; message?: string; body?: unknown; delayMs?: number; headers?: Record<string, string> }
  /** Never answers; the connection stays open until the client gives up or the server closes. */
  | { hang: true };

export type ModelScript = (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;

/** What the request parser of one vendor extracts; the server adds the rest. */
export type ParsedRequest = Omit<ModelRequest, 'path' | 'query' | 'stream' | 'streamEnd' | 'headers' | 'body'>;

/** A complete HTTP answer. */
export interface WireResponse {
  status: number;
  /** Serialised as JSON unless it is a string. */
  body: unknown;
  /** Headers besides content-type and content-length, e.g. retry-after. */
  headers?: Record<string, string>;
}

/** A streamed answer as server-sent events, each a complete event text (`data: …` plus a blank line). */
export interface WireStream {
  /** The events that carry the answer: its start, text deltas and tool calls. */
  content: string[];
  /** The events that end it: finish reason and usage, and the vendor's end marker. */
  end: string[];
}

/** One vendor's wire format: how requests read and how answers are written. */
export interface VendorWire {
  provider: ModelRequest['provider'];
  /**
   * The model named by this request path, or undefined when the path is not this vendor's;
   * `stream` when the path itself says whether the answer is streamed (Gemini), otherwise the
   * body's `"stream": true` decides.
   */
  matchPath(path: string, query: string): { model?: string; stream?: boolean } | undefined;
  /** The answer the vendor gives a request without credentials, or undefined when they are present. */
  checkAuth(headers: Record<string, string>): WireResponse | undefined;
  /** The answer the vendor gives a body it refuses before any model sees it (Anthropic without max_tokens, Mistral's tool-call ids). */
  checkBody?(body: unknown): WireResponse | undefined;
  parseRequest(body: unknown, pathModel: string | undefined): ParsedRequest;
  renderReply(reply: { text?: string; toolCalls?: ScriptedToolCall[] }, request: ModelRequest): WireResponse;
  renderError(status: number, message?: string): WireResponse;
  /** The same answer as `renderReply`, streamed as the vendor streams it. */
  renderStream(reply: { text?: string; toolCalls?: ScriptedToolCall[] }, request: ModelRequest): WireStream;
  /** The vendor's error event inside a stream that has begun. */
  renderStreamError(message: string): string;
}
