import type { AnyTRPCProcedure, TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import type { Agent } from '../app/agent.js';
import type { EventFeed } from '../app/event-feed.js';
import { TRPC_PATH } from '../trpc/middleware.js';
import { createAppRouter } from '../trpc/router.js';
import { APPROVAL_UUID, CONVERSATION_ID } from './examples.js';
import type { RouteDoc } from './routes.js';
import * as shapes from './shapes.js';

/**
 * The tRPC procedures as routes of the document, read from the router itself: a procedure added
 * there is documented with its input schema without a change here. Their answers are REST's
 * shapes; `OUTPUTS` names them (a procedure missing from it is documented with any `data`).
 */

const OUTPUTS: Record<string, z.ZodType> = {
  'auth.whoami': shapes.whoami,
  'conversations.create': shapes.conversationReply,
  'conversations.list': shapes.conversationListReply,
  'conversations.get': shapes.conversationPageReply,
  'conversations.send': shapes.conversationReply,
  'conversations.delete': z.object({ deleted: z.literal(true) }),
  'approvals.list': shapes.approvalListReply,
  'approvals.get': shapes.approvalRecord,
  'approvals.resolve': shapes.conversationReply,
  'tools.list': shapes.toolListReply,
};

/** Examples of mutation inputs. */
const EXAMPLES: Record<string, Record<string, unknown>> = {
  'conversations.create': { 'with a message': { message: 'Delete resource res-42' } },
  'conversations.send': { message: { conversationId: CONVERSATION_ID, message: 'list resources' } },
  'conversations.delete': { delete: { id: CONVERSATION_ID } },
  'approvals.resolve': {
    approve: { uuid: APPROVAL_UUID, approved: true },
    'reject with a reason': { uuid: APPROVAL_UUID, approved: false, reason: 'not this one' },
  },
};

const trpcError = z
  .object({
    error: z.object({
      message: z
        .string()
        .meta({ description: 'For BAD_REQUEST: each problem as `field: what was expected`; a field the input does not take is named.' }),
      code: z.number().int().meta({ description: 'The JSON-RPC code (-32600 for BAD_REQUEST).' }),
      data: z.object({
        code: z.string().meta({ example: 'BAD_REQUEST' }),
        httpStatus: z.number().int(),
        path: z.string().optional(),
        conflict: z.unknown().optional(),
      }),
    }),
  })
  .meta({ id: 'TrpcError', description: "A tRPC error: REST's status as data.httpStatus and code (BAD_REQUEST, NOT_FOUND, CONFLICT, …)." });

/** The input as JSON Schema, for the `input` query parameter (tRPC sends it URL-encoded JSON). */
function inputJsonSchema(input: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

/**
 * Every procedure of the router by its dotted path. tRPC has no other way to list them than
 * the definition (`_def`) its exported types declare (TRPCRouterRecord, AnyTRPCProcedure):
 * read through those types, a change of its shape fails the typecheck.
 */
function proceduresOf(record: TRPCRouterRecord, prefix = ''): Array<[string, AnyTRPCProcedure]> {
  return Object.entries(record).flatMap(([key, value]) =>
    typeof value === 'function' ? [[`${prefix}${key}`, value] as [string, AnyTRPCProcedure]] : proceduresOf(value, `${prefix}${key}.`),
  );
}

export function trpcRoutes(): RouteDoc[] {
  // Only the procedures' definitions are read: nothing behind them is called.
  const router = createAppRouter({ agent: {} as Agent, feed: {} as EventFeed });
  return proceduresOf(router._def.record).map(([name, procedure]): RouteDoc => {
    const { type, inputs } = procedure._def;
    const input = inputs[0] instanceof z.ZodType ? inputs[0] : undefined;
    const output = OUTPUTS[name];
    const post = type === 'mutation';
    return {
      method: post ? 'post' : 'get',
      path: `${TRPC_PATH}/${name}`,
      tag: 'tRPC',
      summary: `${name} (${type})`,
      description:
        (post ? 'A tRPC mutation: the input is the JSON body.' : `A tRPC ${type}: the input goes URL-encoded as JSON in ?input=.`) +
        (type === 'subscription'
          ? ' Answers with server-sent events (httpSubscriptionLink); stored events carry ids, and a reconnect resumes after the last one (lastEventId).'
          : ' Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position.') +
        " The web chat speaks this face; its answers are REST's shapes.",
      ...(input && !post && { queryJson: { name: 'input', schema: inputJsonSchema(input) } }),
      ...(input && post && { body: { schema: input, required: !input.safeParse(undefined).success, examples: EXAMPLES[name] ?? {} } }),
      responses: {
        200:
          type === 'subscription'
            ? { description: 'the event stream', type: 'text/event-stream', schema: z.string() }
            : { description: 'the result', schema: z.object({ result: z.object({ data: output ?? z.unknown() }) }) },
        400: { description: 'BAD_REQUEST: the input does not fit (a field it does not take is named)', schema: trpcError },
        404: { description: 'NOT_FOUND', schema: trpcError },
      },
    };
  });
}
