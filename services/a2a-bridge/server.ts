import { z } from 'zod';
import type { A2ABridgeServiceService, DescribeAgentResponse, GetTaskResponse, SendMessageResponse } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { MAX_REASON_LENGTH } from '../common/decision-reason.js';
import { invalidArgument } from '../common/grpc/errors.js';
import type { UnaryHandlers } from '../common/grpc/server.js';
import type { A2aBridge } from './bridge.js';

/** The gRPC face of the bridge: validate (zod: a clear INVALID_ARGUMENT, never a crash), call the bridge, wrap the answer. */

const peerSchema = z.object(
  {
    name: z.string().trim().min(1, "a name (the config's name of the agent)"),
    url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
    timeoutMs: z.number().int().min(0, '0 (60 s) or a positive number of milliseconds'),
  },
  { error: 'a peer {name, url, timeout_ms}' },
);

/** proto3 leaves unset strings empty: an empty task or context id is no id. */
const optionalId = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined));

const describeAgentSchema = z.object({ peer: peerSchema });

const sendMessageSchema = z
  .object({
    peer: peerSchema,
    text: z.string(),
    taskId: optionalId,
    contextId: optionalId,
    approved: z.boolean().optional(),
    reason: z.string().max(MAX_REASON_LENGTH, `at most ${MAX_REASON_LENGTH} characters`).optional(),
  })
  .refine((request) => request.approved !== undefined || request.text.trim() !== '', {
    path: ['text'],
    message: 'the text of the message (empty unless the message answers an approval)',
  })
  .refine((request) => request.approved === undefined || request.taskId !== undefined, {
    path: ['taskId'],
    message: 'the id of the task whose approval "approved" answers',
  });

const getTaskSchema = z.object({ peer: peerSchema, taskId: z.string().trim().min(1, 'the id of the task at the peer') });

const snakeCase = (key: PropertyKey) => String(key).replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The first problem as "<Method>: <field path>: expected <what>", in the proto's field names. */
function validate<T>(schema: z.ZodType<T>, request: unknown, method: string): T {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(snakeCase).join('.') || 'request';
  throw invalidArgument(`${method}: ${path}: expected ${issue.message}`);
}

export function a2aBridgeHandlers(bridge: A2aBridge): UnaryHandlers<typeof A2ABridgeServiceService> {
  return {
    describeAgent: async (request, { request: caller }): Promise<DescribeAgentResponse> => {
      const { peer } = validate(describeAgentSchema, request, 'DescribeAgent');
      return bridge.describeAgent(peer, caller);
    },
    sendMessage: async (request, { request: caller }): Promise<SendMessageResponse> => {
      const { peer, text, taskId, contextId, approved, reason } = validate(sendMessageSchema, request, 'SendMessage');
      return { task: await bridge.sendMessage(peer, { text, taskId, contextId, approved, reason }, caller) };
    },
    getTask: async (request, { request: caller }): Promise<GetTaskResponse> => {
      const { peer, taskId } = validate(getTaskSchema, request, 'GetTask');
      return { task: await bridge.getTask(peer, taskId, caller) };
    },
  };
}
