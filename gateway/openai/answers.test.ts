import { describe, expect, it } from 'vitest';
import { ApprovalStatus, type Conversation, type PendingApproval } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { ConversationBusy } from '../app/busy.js';
import { answerText, requireModel, runTurn, type TurnsAgent } from './completions.js';
import { OpenAiError, openAiFailureOf } from './errors.js';
import { remainderOf } from './stream.js';

const approval = {
  uuid: '11111111-2222-4333-8444-555555555555',
  conversationId: 'c-1',
  toolName: 'resources_add',
  toolArgsJson: '{"name":"x"}',
  description: 'Add x',
  status: ApprovalStatus.APPROVAL_STATUS_PENDING,
} as unknown as PendingApproval;

describe("the OpenAI face's answers", () => {
  it("names the approval, how to decide it and how to go on, after the agent's own text", () => {
    const text = answerText({ response: 'I will add it.', approval }, 'c-1');
    expect(text.split('\n')[0]).toBe('I will add it.');
    expect(text).toContain(`Approval required (id: ${approval.uuid}): Add x`);
    expect(text).toContain(`POST /approvals/${approval.uuid}`);
    expect(text).toContain('X-Conversation-Id: c-1');
    expect(answerText({ response: 'plain' }, 'c-1')).toBe('plain');
  });

  it("says the approval line once when the orchestrator's answer is that line, and counts the turn's tokens only", async () => {
    const counted = { inputTokens: 1200, outputTokens: 80 };
    const agent = {
      async sendMessage() {
        counted.inputTokens += 700;
        counted.outputTokens += 25;
        return {
          conversation: {} as Conversation,
          result: { response: `Approval required (id: ${approval.uuid}): Add x`, waitingApproval: true, approval },
        };
      },
      async getConversationRecord() {
        return { usage: { ...counted } } as Conversation;
      },
    } as unknown as TurnsAgent;
    const outcome = await runTurn(agent, { conversationId: 'c-1', sessionId: 'a1b2c3d4', tokensBefore: { ...counted } }, 'add x');
    expect(outcome.usage).toEqual({ prompt_tokens: 700, completion_tokens: 25, total_tokens: 725 });
    const text = answerText(outcome, 'c-1');
    expect(text.match(/Approval required/g)).toHaveLength(1);
    expect(text.startsWith(`Approval required (id: ${approval.uuid}): Add x\nTool: resources_add`)).toBe(true);
  });

  it('a stream ends with what its deltas did not carry of the answer', () => {
    expect(remainderOf('Done. all', '')).toBe('Done. all');
    expect(remainderOf('Done. all', 'Done.')).toBe(' all');
    expect(remainderOf('Done. all', 'Done. all')).toBe('');
    expect(remainderOf('Done. all', 'other text')).toBe('\n\nDone. all');
  });

  it("errors: OpenAI's shape with the status of app/errors.ts", () => {
    expect(openAiFailureOf(new OpenAiError(400, 'bad', 'messages'))).toEqual({
      status: 400,
      unexpected: false,
      body: { error: { message: 'bad', type: 'invalid_request_error', param: 'messages', code: null } },
    });
    expect(
      openAiFailureOf(
        new RpcError(GrpcStatus.NOT_FOUND, 'conversation x not found', '/asg.store.v1.ConversationStoreService/GetConversation'),
      ),
    ).toMatchObject({ status: 404, body: { error: { type: 'not_found_error', message: 'conversation x not found' } } });
    expect(openAiFailureOf(new ConversationBusy('c-1'))).toMatchObject({
      status: 409,
      body: { error: { type: 'conflict_error', code: 'conversation_busy' } },
    });
    expect(openAiFailureOf(new Error('boom'))).toMatchObject({ status: 500, unexpected: true, body: { error: { type: 'server_error' } } });
    expect(() => requireModel({ id: 'agent', created: 0 }, 'gpt-4o')).toThrow(
      expect.objectContaining({ status: 404, code: 'model_not_found', param: 'model' }),
    );
  });
});
