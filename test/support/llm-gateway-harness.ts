/**
 * The llm-gateway under test, over real gRPC, with every provider pointed at one scripted
 * model: `useLlmGateway()` registers the vitest hooks that start and close the scripted model
 * and stop every gateway a test started, and the small builders the gateway suites share.
 * Holds no assertions: the suites make those.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  ChatRole,
  LlmGatewayServiceService,
  type ChatMessage,
  type GenerateRequest,
  type ToolDefinition,
} from '../../gen/ts/asg/llm/v1/llm.js';
import type { Clock } from '../../services/common/backoff.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import { RpcError } from '../../services/common/grpc/errors.js';
import type { Logger, LogFields } from '../../services/common/log.js';
import type { RunningService } from '../../services/common/service.js';
import { startLlmGateway } from '../../services/llm-gateway/index.js';
import type { ProviderName } from '../../services/llm-gateway/routing.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer, type ScriptedReply } from './scripted-model.js';

// Recognisable fake keys: none may ever appear in an error message or a log line.
export const KEYS = {
  GEMINI_API_KEY: 'gemini-fake-key-DO-NOT-LEAK-4711',
  ANTHROPIC_API_KEY: 'anthropic-fake-key-DO-NOT-LEAK-4712',
  OPENAI_API_KEY: 'openai-fake-key-DO-NOT-LEAK-0815',
  MISTRAL_API_KEY: 'mistral-fake-key-DO-NOT-LEAK-4714',
  OPENROUTER_API_KEY: 'openrouter-fake-key-DO-NOT-LEAK-4715',
};

/** One model of each keyed provider, with the variable that holds its key. */
export const MODELS_AND_KEY_VARIABLES: [model: string, keyEnv: keyof typeof KEYS][] = [
  ['gemini-2.5-flash', 'GEMINI_API_KEY'],
  ['claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
  ['openai-gpt-4o', 'OPENAI_API_KEY'],
  ['mistral-large-latest', 'MISTRAL_API_KEY'],
  ['openrouter-anthropic/claude-3-opus', 'OPENROUTER_API_KEY'],
];

const SYSTEM_PROMPT = 'You manage resources.';

export const RESOURCE_TOOLS: ToolDefinition[] = [
  { name: 'resources_list', description: 'List resources', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'resources_add',
    description: 'Add a resource',
    inputSchema: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'number' } }, required: ['name', 'value'] },
  },
];

export const user = (text: string): ChatMessage => ({ role: ChatRole.CHAT_ROLE_USER, text, toolCalls: [], toolResults: [] });

/** A Generate (or GenerateStream: the same shape) request with the resource system prompt. */
export function generateRequest(
  model: string,
  messages: ChatMessage[] = [user('hello')],
  tools: ToolDefinition[] = RESOURCE_TOOLS,
): GenerateRequest {
  return { model, systemPrompt: SYSTEM_PROMPT, messages, tools };
}

// `any`: the vendor contracts read each vendor's JSON body field by field.
export type WireBody = any;

/** What every vendor contract of the gateway suites names. */
export interface ProviderContract {
  provider: ProviderName;
  /** The model as configured. */
  model: string;
  /** The model name the vendor must receive. */
  sentModel: string;
}

/** The path of a base URL with `suffix` after it, as the scripted model records it. */
export const pathOf = (base: string, suffix: string): string => `${new URL(base).pathname}${suffix}`;

/** `inTurn(...replies)`: a script that answers with `replies` in turn, then with `last`. */
export function inTurnThen(last: ScriptedReply): (...replies: ScriptedReply[]) => () => ScriptedReply {
  return (...replies) => {
    let next = 0;
    return () => replies[next++] ?? last;
  };
}

export interface CapturedLog extends Logger {
  lines: { level: string; msg: string; fields: LogFields }[];
}

/** Captures log lines unredacted, so that a key our own code put there would show. */
export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const at =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void lines.push({ level, msg, fields });
  const log: CapturedLog = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return log;
}

/** A sleep that returns at once and remembers what it was asked for; the clock is the real one unless `now` says otherwise. */
export function recordingClock(now: () => number = () => Date.now()): Clock & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    now,
    sleep: async (ms) => {
      waits.push(ms);
    },
  };
}

/** The RpcError a call failed with; any other outcome is an error of the test. */
export async function rpcError(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof RpcError)) throw new Error(`expected an RpcError, got ${String(error)}`);
  return error;
}

type LlmGatewayClient = PromiseClient<typeof LlmGatewayServiceService>;

interface GatewayOptions {
  /** The gateway's environment; by default every key in KEYS and every base URL of the scripted model. */
  env?: NodeJS.ProcessEnv;
  /** The whole configuration, as is: no 1 ms retry backoff unless it says so. */
  config?: Record<string, unknown>;
  /** The `llm` section, over `{ retry: { initial_backoff: '1ms' } }` (ignored when `config` is given). */
  llm?: Record<string, unknown>;
  retryClock?: Clock;
}

export interface LlmGatewayHarness {
  /** The scripted model of this file, started in beforeAll; its requests and script are reset after each test. */
  model(): ScriptedModelServer;
  /** A gateway with every key and base URL set; unless `config` or `llm` says otherwise, retries wait 1 ms. Stopped after the test. */
  start(options?: GatewayOptions): Promise<{ client: LlmGatewayClient; log: CapturedLog }>;
}

/** Registers the hooks of a gateway suite; call it once, at the top of the test file. */
export function useLlmGateway(): LlmGatewayHarness {
  let model: ScriptedModelServer | undefined;
  let running: { service: RunningService; client: LlmGatewayClient }[] = [];
  const current = (): ScriptedModelServer => {
    if (!model) throw new Error('the scripted model runs only inside the tests of the file that called useLlmGateway()');
    return model;
  };

  beforeAll(async () => {
    model = await startScriptedModel();
  });

  afterAll(async () => {
    await model?.close();
  });

  afterEach(async () => {
    for (const { client, service } of running) {
      client.close();
      await service.stop();
    }
    running = [];
    current().requests.length = 0;
    current().setScript(resourceAgentScript);
  });

  return {
    model: current,
    async start(options = {}) {
      const log = captureLog();
      const env = options.env ?? { ...KEYS, ...current().baseUrlEnv };
      const config = configSlice(
        configSchema.parse(options.config ?? { llm: { retry: { initial_backoff: '1ms' }, ...options.llm } }),
        'llmGateway',
      );
      const service = await startLlmGateway({
        config,
        listen: '127.0.0.1:0',
        log,
        env,
        ...(options.retryClock ? { retryClock: options.retryClock } : {}),
      });
      const client = createPromiseClient(LlmGatewayServiceService, service.address, 'test', 5000);
      running.push({ service, client });
      return { client, log };
    },
  };
}
