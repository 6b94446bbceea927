/**
 * Scripted LLMs over real HTTP, in each vendor's exact wire format, so that tests of the
 * whole system run the real provider clients against a model whose answers they choose.
 * Gemini at `{geminiBaseUrl}/models/{model}:generateContent`, Anthropic at
 * `{anthropicBaseUrl}/messages`, and OpenAI, Mistral, OpenRouter and Ollama at
 * `{…BaseUrl}/chat/completions`, each vendor under its own path so that a call sent to the
 * wrong base URL is refused; bound to 127.0.0.1 only. A request that asks for a stream
 * (Gemini's `:streamGenerateContent?alt=sse`, `"stream": true` for the others) gets the same
 * answer as server-sent events in the vendor's streaming format, paced and broken off as the
 * reply's `stream` says.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicWire } from './scripted-model/anthropic.js';
import { geminiWire } from './scripted-model/gemini.js';
import { mistralWire } from './scripted-model/mistral.js';
import { ollamaWire } from './scripted-model/ollama.js';
import { openaiWire } from './scripted-model/openai.js';
import { openrouterWire } from './scripted-model/openrouter.js';
import { resourceAgentScript } from './scripted-model/resource-agent.js';
import { asObject } from './scripted-model/json.js';
import type {
  ModelRequest,
  ModelScript,
  ScriptedReply,
  StreamScript,
  VendorWire,
  WireResponse,
  WireStream,
} from './scripted-model/types.js';

export type { ModelRequest, ModelScript, ScriptedReply } from './scripted-model/types.js';
export { resourceAgentScript } from './scripted-model/resource-agent.js';

export interface ScriptedModelServer {
  /** e.g. http://127.0.0.1:PORT/v1beta, for GEMINI_BASE_URL. */
  geminiBaseUrl: string;
  /** e.g. http://127.0.0.1:PORT/v1, for OPENAI_BASE_URL. */
  openaiBaseUrl: string;
  /** e.g. http://127.0.0.1:PORT/anthropic/v1, for ANTHROPIC_BASE_URL. */
  anthropicBaseUrl: string;
  /** e.g. http://127.0.0.1:PORT/mistral/v1, for MISTRAL_BASE_URL. */
  mistralBaseUrl: string;
  /** e.g. http://127.0.0.1:PORT/ollama/v1, for OLLAMA_BASE_URL. */
  ollamaBaseUrl: string;
  /** e.g. http://127.0.0.1:PORT/openrouter/api/v1, for OPENROUTER_BASE_URL. */
  openrouterBaseUrl: string;
  /** Every base URL above under its environment variable, to spread into a process environment. */
  baseUrlEnv: Record<
    'GEMINI_BASE_URL' | 'ANTHROPIC_BASE_URL' | 'OPENAI_BASE_URL' | 'MISTRAL_BASE_URL' | 'OLLAMA_BASE_URL' | 'OPENROUTER_BASE_URL',
    string
  >;
  /** Every model request received, in order (also those refused for missing credentials or a missing required field). */
  requests: ModelRequest[];
  setScript(script: ModelScript): void;
  /** Stops the server, cutting hanging and delayed answers short. */
  close(): Promise<void>;
}

const VENDORS: readonly VendorWire[] = [geminiWire, anthropicWire, openaiWire, mistralWire, ollamaWire, openrouterWire];

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, answer: WireResponse): void {
  if (res.destroyed || res.headersSent) return;
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
  res.writeHead(answer.status, {
    ...answer.headers,
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export async function startScriptedModel(script: ModelScript = resourceAgentScript): Promise<ScriptedModelServer> {
  let current = script;
  let closing = false;
  const requests: ModelRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const later = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  /**
   * Turns a scripted reply into the vendor's HTTP answer: a whole response, a stream, or
   * undefined for never answering. Errors are whole responses also when a stream was asked
   * for: vendors refuse before they start streaming.
   */
  const answerFor = async (
    wire: VendorWire,
    reply: ScriptedReply,
    request: ModelRequest,
  ): Promise<WireResponse | { stream: WireStream; script: StreamScript } | undefined> => {
    if ('hang' in reply) return undefined;
    if ('httpStatus' in reply) {
      if (reply.delayMs) await later(reply.delayMs);
      const answer =
        reply.body === undefined ? wire.renderError(reply.httpStatus, reply.message) : { status: reply.httpStatus, body: reply.body };
      return reply.headers ? { ...answer, headers: reply.headers } : answer;
    }
    if (request.stream) return { stream: wire.renderStream(reply, request), script: reply.stream ?? {} };
    return wire.renderReply(reply, request);
  };

  /** Sends the events one by one, noting in `request.streamEnd` how the stream ended. */
  const sendStream = async (
    res: ServerResponse,
    wire: VendorWire,
    stream: WireStream,
    script: StreamScript,
    request: ModelRequest,
  ): Promise<void> => {
    const { breakOff, delayMs } = script;
    const events =
      breakOff === undefined
        ? [...stream.content, ...stream.end]
        : breakOff === 'drop'
          ? stream.content
          : [...stream.content, wire.renderStreamError(breakOff.errorEvent)];
    let sent = 0;
    res.on('close', () => {
      if (sent < events.length && !closing) request.streamEnd = 'client-closed';
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of events) {
      if (sent > 0 && delayMs) await later(delayMs);
      if (res.destroyed || closing) return;
      res.write(event);
      sent += 1;
    }
    if (breakOff === 'drop') {
      // Paced like an event, so that the client has read what came before the drop.
      if (delayMs) await later(delayMs);
      if (res.destroyed || closing) return;
      request.streamEnd = 'dropped';
      // The events written so far go out, then the connection closes without the end of the
      // chunked body: the client sees the answer cut off mid-way.
      res.socket?.destroySoon();
      return;
    }
    request.streamEnd = 'complete';
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const query = url.search;
    const match =
      req.method === 'POST'
        ? VENDORS.map((wire) => ({ wire, route: wire.matchPath(path, query) })).find((entry) => entry.route)
        : undefined;
    if (!match?.route) {
      send(res, {
        status: 404,
        body: { error: { code: 404, message: `no scripted model at ${req.method} ${path}`, status: 'NOT_FOUND' } },
      });
      return;
    }
    const { wire, route } = match;
    const text = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      send(res, wire.renderError(400, 'The request body is not valid JSON.'));
      return;
    }
    const headers = headersOf(req);
    const stream = route.stream ?? asObject(body).stream === true;
    const request: ModelRequest = { ...wire.parseRequest(body, route.model), path, query, stream, headers, body };
    requests.push(request);
    const refusal = wire.checkAuth(headers) ?? wire.checkBody?.(body);
    if (refusal) {
      send(res, refusal);
      return;
    }
    let answer: Awaited<ReturnType<typeof answerFor>>;
    try {
      answer = await answerFor(wire, await current(request), request);
    } catch (error) {
      answer = wire.renderError(500, `scripted model failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!answer || closing) return;
    if ('stream' in answer) await sendStream(res, wire, answer.stream, answer.script, request);
    else send(res, answer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, { status: 500, body: { error: { message: String(error) } } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const baseUrlEnv = {
    GEMINI_BASE_URL: `${origin}/v1beta`,
    ANTHROPIC_BASE_URL: `${origin}/anthropic/v1`,
    OPENAI_BASE_URL: `${origin}/v1`,
    MISTRAL_BASE_URL: `${origin}/mistral/v1`,
    OLLAMA_BASE_URL: `${origin}/ollama/v1`,
    OPENROUTER_BASE_URL: `${origin}/openrouter/api/v1`,
  };

  return {
    geminiBaseUrl: baseUrlEnv.GEMINI_BASE_URL,
    openaiBaseUrl: baseUrlEnv.OPENAI_BASE_URL,
    anthropicBaseUrl: baseUrlEnv.ANTHROPIC_BASE_URL,
    mistralBaseUrl: baseUrlEnv.MISTRAL_BASE_URL,
    ollamaBaseUrl: baseUrlEnv.OLLAMA_BASE_URL,
    openrouterBaseUrl: baseUrlEnv.OPENROUTER_BASE_URL,
    baseUrlEnv,
    requests,
    setScript(next) {
      current = next;
    },
    async close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Hanging answers keep their connections open; close() would wait for them forever.
      server.closeAllConnections();
      await closed;
    },
  };
}
