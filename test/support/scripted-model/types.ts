/** What a scripted model sees of one request, the same for every vendor's wire format. */
export interface ModelRequest {
  provider: 'gemini' | 'anthropic' | 'openai' | 'mistral' | 'ollama' | 'openrouter';
  /** The request path, e.g. /v1beta/models/gemini-2.5-flash:generateContent. */
  path: string;
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

export type ScriptedReply =
  | { text: string }
  | { toolCalls: ScriptedToolCall[]; text?: string }
  /**
   * An HTTP error (or any status) with the vendor's error body, saying `message` when given, unless
   * `body` is given; a string body is sent raw.
   */
  | { httpStatus: number; message?: string; body?: unknown; delayMs?: number; headers?: Record<string, string> }
  /** Never answers; the connection stays open until the client gives up or the server closes. */
  | { hang: true };

export type ModelScript = (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;

/** What the request parser of one vendor extracts; the server adds headers and body. */
export type ParsedRequest = Omit<ModelRequest, 'path' | 'headers' | 'body'>;

/** A complete HTTP answer. */
export interface WireResponse {
  status: number;
  /** Serialised as JSON unless it is a string. */
  body: unknown;
  /** Headers besides content-type and content-length, e.g. retry-after. */
  headers?: Record<string, string>;
}

/** One vendor's wire format: how requests read and how answers are written. */
export interface VendorWire {
  provider: ModelRequest['provider'];
  /** The model named by this request path, or undefined when the path is not this vendor's. */
  matchPath(path: string): { model?: string } | undefined;
  /** The answer the vendor gives a request without credentials, or undefined when they are present. */
  checkAuth(headers: Record<string, string>): WireResponse | undefined;
  /** The answer the vendor gives a body it refuses before any model sees it (Anthropic without max_tokens, Mistral's tool-call ids). */
  checkBody?(body: unknown): WireResponse | undefined;
  parseRequest(body: unknown, pathModel: string | undefined): ParsedRequest;
  renderReply(reply: { text?: string; toolCalls?: ScriptedToolCall[] }, request: ModelRequest): WireResponse;
  renderError(status: number, message?: string): WireResponse;
}
