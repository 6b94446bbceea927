/**
 * The run driver's own contract (driver.ts), over a fake mesh: the order of what touches the
 * store, model calls of parallel branches at once, a lost write race redone on what is stored
 * now, refusals as gRPC errors, the request's deadline as the machine's timer, and an approved
 * call run exactly as it was approved.
 */
import { describe, expect, it, vi } from 'vitest';
import type { GenerateStreamResponse } from '../../../gen/ts/asg/llm/v1/llm.js';
import { ApprovalStatus, ApprovalTimeoutAction, MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../../common/call-hash.js';
import { runWithContext } from '../../common/context.js';
import { GrpcStatus, RpcError } from '../../common/grpc/errors.js';
import { prometheusText } from '../../common/metrics.js';
import {
  CONVERSATION,
  delta,
  driverOf,
  FakeMesh,
  finish,
  RUN_ID,
  simpleEnv,
  startTurn,
  testLog,
  toolCall,
  treeEnv,
  type ModelCall,
  type ModelTurn,
} from '../../../test/support/orchestrator-mesh.js';
import { assistantCall, toolResult } from '../domain/messages.js';
import type { Activation } from './driver.js';
import { freshRun, STOPPED_BY_DEADLINE, storedRun } from './machine.js';
import { MAX_WRITE_ATTEMPTS } from './transition.js';
import { decodeRun, encodeRun, type StoredRun } from './state.js';
import type { DecisionFacts, MachineEnv, RunAnswer } from './types.js';
import { approvalsSchema } from '../../common/config/schema.js';
import { ExpiryPolicy } from '../domain/expiry.js';
import { ApprovalPolicies } from '../domain/approval-policy.js';
import { until } from '../../../test/support/until.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function runOf(change: Partial<StoredRun> = {}): StoredRun {
  return {
    runId: RUN_ID,
    mode: 'simple',
    userMessage: 'delete alpha',
    session: {},
    pending: [],
    branchOutputs: {},
    modelCalls: 0,
    ...change,
  };
}

/** A model turn that waits for `gate` before it answers `text`. */
function answerAfter(gate: Promise<void>, text: string): () => AsyncIterable<GenerateStreamResponse> {
  return async function* () {
    await gate;
    yield delta(text);
    yield finish();
  };
}

describe('the store', () => {
  it("stores a node's finish (its checkpoint) before the next node's model call, even when the store is slow", async () => {
    const mesh = new FakeMesh({
      model: [
        [delta('First.'), finish()],
        [delta('Written.'), finish()],
      ],
    });
    const order: string[] = [];
    mesh.before.updateRun = async (request) => {
      order.push(`write begins (${request.run ? 'checkpoint' : 'finish'})`);
      if (request.run) await sleep(30);
      order.push('write ends');
    };
    const { answer } = await startTurn(
      mesh,
      treeEnv({
        name: 'pipeline',
        type: 'sequential',
        agents: [
          { name: 'first', type: 'llm', output_key: 'one' },
          { name: 'writer', type: 'llm', prompt: 'after {one}' },
        ],
      }),
    );

    expect(answer).toEqual({ kind: 'answered', response: 'Written.' });
    const calls = mesh.calls.filter((call) => call === 'store.updateRun' || call.startsWith('llm.'));
    expect(calls).toEqual(['llm.generate', 'store.updateRun', 'llm.generate', 'store.updateRun']);
    expect(order).toEqual(['write begins (checkpoint)', 'write ends', 'write begins (finish)', 'write ends']);
    expect(mesh.appends).toHaveLength(0);
    const checkpoint = decodeRun(mesh.writes[0]!.run!);
    expect(checkpoint.session).toEqual({ one: 'First.' });
    expect(checkpoint.checkpoint?.walk).toEqual({ '': { kind: 'sequential', index: 1, output: 'First.' } });
    expect(mesh.conversation.messages.map((message) => [message.content, message.node])).toEqual([
      ['list resources', undefined],
      ['First.', 'first'],
      ['Written.', 'writer'],
    ]);
  });

  it('redoes a write that lost the race on the run as stored now, decoded, at its revision', async () => {
    const mesh = new FakeMesh({ model: [[toolCall('c1', 'resources_delete', { id: 'alpha' }), finish('tool-calls')]] });
    // Another request of the same run wrote it first.
    mesh.before.updateRun = () => {
      if (mesh.writes.length === 0 && mesh.conversation.runRevision === 0)
        mesh.storeRun({ ...encodeRun(runOf({ userMessage: 'list resources', modelCalls: 2 })), revision: 0 });
    };
    const { answer } = await startTurn(mesh, simpleEnv());

    expect(answer.kind).toBe('paused');
    expect(mesh.calls.filter((call) => call.startsWith('store.'))).toEqual(['store.updateRun', 'store.getConversation', 'store.updateRun']);
    expect(mesh.writes).toHaveLength(1);
    const write = mesh.writes[0]!;
    expect(write.expectedRevision).toBe(1);
    const run = decodeRun(write.run!);
    // The stored run's model calls and this activation's one.
    expect(run.modelCalls).toBe(3);
    expect(run.pending.map((pause) => [pause.approvalUuid, pause.toolName])).toEqual([
      [answer.kind === 'paused' ? answer.approvals[0] : '', 'resources_delete'],
    ]);
    expect(mesh.conversation.pendingApprovals.map((approval) => approval.toolName)).toEqual(['resources_delete']);
  });

  it("a simple-mode read turn touches the store once, to end it, and that write carries the turn's journal", async () => {
    const mesh = new FakeMesh({
      model: [
        [toolCall('c1', 'resources_list'), finish('tool-calls', 11, 2)],
        [delta('Two resources.'), finish('stop', 13, 3)],
      ],
    });
    const { answer } = await startTurn(mesh, simpleEnv());

    expect(answer).toEqual({ kind: 'answered', response: 'Two resources.' });
    // The same store calls as a turn without a journal: no call and no transaction of its own.
    expect(mesh.calls.filter((call) => call.startsWith('store.'))).toEqual(['store.updateRun']);
    const journal = mesh.writes[0]!.journal!;
    expect(journal).toMatchObject({ runId: RUN_ID, status: 'completed' });
    expect(journal.steps.map((step) => [step.kind, JSON.parse(step.bodyJson)])).toEqual([
      ['model_call', expect.objectContaining({ input_tokens: 11, output_tokens: 2, finish_reason: 'tool-calls' })],
      ['tool_call', expect.objectContaining({ tool: 'resources_list', outcome: 'ok' })],
      ['model_call', expect.objectContaining({ input_tokens: 13, output_tokens: 3, finish_reason: 'stop' })],
    ]);
  });

  it('ends as superseded when the run stored now is another one', async () => {
    const mesh = new FakeMesh({ model: [[delta('Done.'), finish()]] });
    mesh.before.updateRun = () => {
      if (mesh.conversation.runRevision === 0) mesh.storeRun({ ...encodeRun(runOf({ runId: 'another-run' })), revision: 0 });
    };
    const { answer } = await startTurn(mesh, simpleEnv());
    expect(answer).toEqual({ kind: 'superseded', reason: 'a newer message started another run', endTurn: false });
    expect(mesh.writes).toEqual([]);
  });
});

describe('parallel branches', () => {
  it('call the model at once: both requests reach the model before either answers', async () => {
    let bothAsked!: () => void;
    const asked = new Promise<void>((resolve) => (bothAsked = resolve));
    const seen: string[] = [];
    const branch = (text: string): ModelTurn => {
      const answer = answerAfter(
        Promise.race([asked, sleep(5000).then(() => Promise.reject(new Error('the other branch never called the model')))]),
        text,
      );
      return (call: ModelCall): AsyncIterable<GenerateStreamResponse> => {
        seen.push(call.request.systemPrompt);
        if (seen.length === 2) bothAsked();
        return answer();
      };
    };
    const mesh = new FakeMesh({ model: [branch('From a.'), branch('From b.')] });
    const { answer } = await startTurn(
      mesh,
      treeEnv({
        name: 'both',
        type: 'parallel',
        agents: [
          { name: 'a', type: 'llm', prompt: 'You are a.' },
          { name: 'b', type: 'llm', prompt: 'You are b.' },
        ],
      }),
    );

    expect(seen).toEqual(['You are a.', 'You are b.']);
    expect(answer).toEqual({ kind: 'answered', response: 'From a.\n\nFrom b.' });
  });
});

describe('refusals', () => {
  it('reject with FAILED_PRECONDITION when a decision cannot be carried out, before anything runs', async () => {
    const mesh = new FakeMesh();
    const approval = mesh.addApproval({
      uuid: 'a-1',
      toolCallId: 'c1',
      toolName: 'resources_delete',
      toolArgsJson: JSON.stringify({ id: 'alpha' }),
    });
    const stored = runOf({
      mode: 'tree',
      pending: [
        {
          approvalUuid: 'a-1',
          path: [0],
          outputKey: '',
          fingerprint: 'f',
          loopIterations: {},
          nodeMessages: 1,
          toolName: 'resources_delete',
          argsHash: approval.argsHash,
        },
      ],
    });
    // The configuration has no agent tree any more.
    const driver = driverOf(mesh, simpleEnv());
    const activation: Activation = {
      conversationId: CONVERSATION,
      watched: false,
      conversation: mesh.snapshot(),
      approval,
      holdsTurn: false,
    };

    await expect(
      driver.drive(
        storedRun(stored, 0),
        { kind: 'approvalDecided', activation: 'activation-2', uuid: 'a-1', approved: true, approval },
        activation,
      ),
    ).rejects.toMatchObject({
      code: GrpcStatus.FAILED_PRECONDITION,
      message: expect.stringContaining('the configuration has no agent tree any more'),
    });
    expect(mesh.calls).toEqual([]);
  });

  it('reject with ABORTED when every write of the run loses its race', async () => {
    const mesh = new FakeMesh({ model: [[delta('Done.'), finish()]] });
    mesh.before.updateRun = () => mesh.storeRun({ ...encodeRun(runOf()), revision: 0 });
    await expect(startTurn(mesh, simpleEnv())).rejects.toMatchObject({
      code: GrpcStatus.ABORTED,
      message: expect.stringContaining(`${MAX_WRITE_ATTEMPTS} writes lost a race`),
    });
    expect(mesh.calls.filter((call) => call === 'store.updateRun')).toHaveLength(MAX_WRITE_ATTEMPTS);
  });
});

describe("the request's deadline", () => {
  /** A model that answers only once the served request's deadline has passed: its call fails then, as a gRPC call would. */
  function untilTheDeadline(deadline: number, answer?: GenerateStreamResponse[]): ModelTurn {
    return async function* () {
      // A little after the deadline, so that the driver's timer has fired first.
      await sleep(deadline - Date.now() + 50);
      if (answer) return yield* answer;
      throw new RpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded', '/asg.llm.v1.LlmGatewayService/Generate');
    };
  }

  async function runUntil(deadline: number, mesh: FakeMesh, env: MachineEnv): Promise<RunAnswer> {
    return runWithContext({ sessionId: '0a1b2c3d', deadline }, async () => (await startTurn(mesh, env)).answer);
  }

  it('ends a run whose model does not answer in time with what came back (its failure), recorded, instead of hanging', async () => {
    const deadline = Date.now() + 200;
    const mesh = new FakeMesh({ model: [untilTheDeadline(deadline)] });
    const answer = await runUntil(deadline, mesh, simpleEnv());

    // The call in flight at the stop comes back (here: failed at its deadline) and ends the run as it would have.
    expect(answer).toEqual({ kind: 'answered', response: expect.stringMatching(/^The model could not answer \(\w+ error\): /) });
    expect(mesh.conversation.messages.at(-1)).toMatchObject({
      role: MessageRole.MESSAGE_ROLE_ASSISTANT,
      content: expect.stringMatching(/^The model could not answer/),
    });
    expect(mesh.conversation.run).toBeUndefined();
  });

  it('asks for no approval when the model answers a destructive call after the deadline', async () => {
    const deadline = Date.now() + 200;
    const mesh = new FakeMesh({
      model: [untilTheDeadline(deadline, [toolCall('c1', 'resources_delete', { id: 'alpha' }), finish('tool-calls')])],
    });
    const answer = await runUntil(deadline, mesh, simpleEnv());

    expect(answer).toEqual({ kind: 'answered', response: STOPPED_BY_DEADLINE });
    expect(mesh.conversation.pendingApprovals).toEqual([]);
    expect(mesh.toolCalls).toEqual([]);
  });

  it("records a tree node's finished work and then the deadline note", async () => {
    const deadline = Date.now() + 200;
    const mesh = new FakeMesh({ model: [untilTheDeadline(deadline, [delta('First done.'), finish()])] });
    const answer = await runUntil(
      deadline,
      mesh,
      treeEnv({
        name: 'steps',
        type: 'sequential',
        agents: [
          { name: 'first', type: 'llm' },
          { name: 'second', type: 'llm' },
        ],
      }),
    );

    expect(answer).toEqual({ kind: 'answered', response: STOPPED_BY_DEADLINE });
    // The second node never started.
    expect(mesh.modelCalls).toHaveLength(1);
    expect(mesh.conversation.messages.slice(1).map((message) => [message.content, message.node])).toEqual([
      ['First done.', 'first'],
      [STOPPED_BY_DEADLINE, undefined],
    ]);
  });
});

describe('a lost lease', () => {
  /** A user message's run whose lease is lost when `lose` says, through the activation's signal as turns.ts gives it. */
  async function runLosing(mesh: FakeMesh, lose: (abort: () => void) => void): Promise<RunAnswer> {
    const controller = new AbortController();
    lose(() => controller.abort('another replica took the run over'));
    const conversation = mesh.snapshot();
    const activation: Activation = {
      conversationId: CONVERSATION,
      watched: false,
      conversation,
      holdsTurn: true,
      stored: 'yes',
      signal: controller.signal,
    };
    return driverOf(mesh, simpleEnv()).drive(
      freshRun('simple', conversation.runRevision),
      { kind: 'userMessage', runId: RUN_ID, activation: 'activation-1', text: 'list resources' },
      activation,
    );
  }

  it("while the turn's last write is on its way (a renewal answered after it): the turn has answered, and says so", async () => {
    const mesh = new FakeMesh({ model: [[delta('Done.'), finish()]] });
    const answer = await runLosing(mesh, (abort) => (mesh.before.updateRun = abort));
    expect(answer).toEqual({ kind: 'answered', response: 'Done.' });
    expect(mesh.conversation.messages.at(-1)).toMatchObject({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Done.' });
  });

  it('at the model: ends at once as lost, without waiting for the model, and writes nothing', async () => {
    let answerNow!: () => void;
    let answered = false;
    const late = async function* () {
      await new Promise<void>((resolve) => (answerNow = resolve));
      yield delta('Too late.');
      answered = true;
      yield finish();
    };
    const mesh = new FakeMesh({ model: [late] });
    const answer = await runLosing(mesh, (abort) => void until('the model call', () => mesh.modelCalls.length > 0).then(abort));
    expect(answer).toEqual({ kind: 'lost', reason: 'another replica took the run over' });
    answerNow();
    await until('the model answered', () => answered);
    await new Promise((resolve) => setImmediate(resolve));
    expect([mesh.writes, mesh.appends]).toEqual([[], []]);
  });
});

describe('an approved call', () => {
  const args = { id: 'alpha' };

  /** A simple-mode run paused at resources_delete {id: alpha}, and the human's approval of it. */
  async function approve(mesh: FakeMesh, argsHash = callHash('resources_delete', args), facts: DecisionFacts = {}): Promise<RunAnswer> {
    const approval = mesh.addApproval({
      uuid: 'a-1',
      toolCallId: 'c1',
      toolName: 'resources_delete',
      toolArgsJson: JSON.stringify(args),
      argsHash,
    });
    const stored = runOf({
      pending: [
        {
          approvalUuid: 'a-1',
          path: [],
          outputKey: '',
          fingerprint: '',
          loopIterations: {},
          nodeMessages: null,
          toolName: 'resources_delete',
          argsHash,
        },
      ],
    });
    mesh.storeRun({ ...encodeRun(stored), revision: 0 });
    const activation: Activation = {
      conversationId: CONVERSATION,
      watched: false,
      conversation: mesh.snapshot(),
      approval,
      holdsTurn: false,
    };
    const driver = driverOf(mesh, simpleEnv());
    return driver.drive(
      storedRun(stored, mesh.conversation.runRevision),
      { kind: 'approvalDecided', activation: 'activation-2', uuid: 'a-1', approved: true, approval, ...facts },
      activation,
    );
  }

  /** The conversation of a run that paused at the call. */
  function paused(): FakeMesh {
    const mesh = new FakeMesh({
      userMessage: 'delete alpha',
      callTool: async () => ({ text: 'deleted alpha', isError: false }),
      model: [[delta('Deleted alpha.'), finish()]],
    });
    mesh.append([assistantCall({ id: 'c1', name: 'resources_delete' }, args)]);
    return mesh;
  }

  it('runs once the claim is won, recorded as executing first and with its result after', async () => {
    const mesh = paused();
    const answer = await approve(mesh);

    expect(answer).toEqual({ kind: 'answered', response: 'Deleted alpha.' });
    expect(mesh.calls).toEqual([
      'store.claimApproval',
      'store.startApprovalExecution',
      'tools.callTool resources_delete',
      'store.finishApprovalExecution',
      'tools.listTools',
      'llm.generate',
      'store.updateRun',
    ]);
    expect(mesh.toolCalls).toEqual([
      { name: 'resources_delete', argumentsJson: JSON.stringify(args), approvalUuid: 'a-1', unapprovedReason: '' },
    ]);
    expect(mesh.finished).toEqual([
      { uuid: 'a-1', success: true, messages: [toolResult({ id: 'c1', name: 'resources_delete' }, args, 'deleted alpha', false)] },
    ]);
    expect(mesh.approvals.get('a-1')!.status).toBe(ApprovalStatus.APPROVAL_STATUS_DONE);
    // The model goes on with the result, and the run ends: nothing stays stored.
    expect(mesh.modelCalls[0]!.request.messages.at(-1)?.toolResults).toEqual([
      { id: 'c1', name: 'resources_delete', output: 'deleted alpha', isError: false },
    ]);
    expect(mesh.conversation.run).toBeUndefined();
  });

  it('is not run when its arguments no longer match the approved hash', async () => {
    const mesh = paused();
    const answer = await approve(mesh, callHash('resources_delete', { id: 'beta' }));

    expect(answer.kind).toBe('answered');
    expect(mesh.toolCalls).toEqual([]);
    expect(mesh.calls.slice(0, 3)).toEqual(['store.claimApproval', 'store.startApprovalExecution', 'store.finishApprovalExecution']);
    expect(mesh.finished).toEqual([
      {
        uuid: 'a-1',
        success: false,
        messages: [
          toolResult(
            { id: 'c1', name: 'resources_delete' },
            args,
            'resources_delete was not executed: the stored call no longer matches the one that was approved.',
            true,
          ),
        ],
      },
    ]);
    expect(mesh.approvals.get('a-1')!.status).toBe(ApprovalStatus.APPROVAL_STATUS_FAILED);
  });

  it('with arguments a human edited: the claim records who and what, the tool gets the edited ones, the model is told', async () => {
    const mesh = paused();
    const edited = { id: 'beta' };
    const answer = await approve(mesh, undefined, { decidedBy: 'alice', via: 'web', editedArgs: edited });

    expect(answer.kind).toBe('answered');
    expect(mesh.claims).toMatchObject([
      { uuid: 'a-1', approved: true, decidedBy: 'alice', via: 'web', editedArgsJson: JSON.stringify(edited) },
    ]);
    // The hash is of the stored (model's) arguments, and it still matches: the edited call runs.
    expect(mesh.toolCalls).toEqual([
      { name: 'resources_delete', argumentsJson: JSON.stringify(edited), approvalUuid: 'a-1', unapprovedReason: '' },
    ]);
    const note = '(arguments edited by alice before approval: {"id":"beta"}) deleted alpha';
    expect(mesh.finished).toEqual([
      { uuid: 'a-1', success: true, messages: [toolResult({ id: 'c1', name: 'resources_delete' }, edited, note, false)] },
    ]);
    expect(mesh.modelCalls[0]!.request.messages.at(-1)?.toolResults).toEqual([
      { id: 'c1', name: 'resources_delete', output: note, isError: false },
    ]);
  });

  it('with edited arguments whose stored call no longer matches its hash: nothing runs, and no edit is claimed to have run', async () => {
    const mesh = paused();
    await approve(mesh, callHash('resources_delete', { id: 'gamma' }), { decidedBy: 'alice', editedArgs: { id: 'beta' } });
    expect(mesh.toolCalls).toEqual([]);
    expect(mesh.finished[0]!.messages[0]!.content).toBe(
      'resources_delete was not executed: the stored call no longer matches the one that was approved.',
    );
  });
});

describe('approvals asked', () => {
  it('are stored with the expiry of the first matching tool pattern', async () => {
    const mesh = new FakeMesh({ model: [[toolCall('c1', 'resources_delete', { id: 'alpha' }), finish('tool-calls')]] });
    const expiry = new ExpiryPolicy(
      approvalsSchema.parse({
        timeout: '1h',
        tools: { 'resources_del*': { timeout: '2s' }, '*': { timeout: '5m', on_timeout: 'approve' } },
      }),
    );
    const { answer } = await startTurn(mesh, simpleEnv(), driverOf(mesh, simpleEnv(), expiry));

    expect(answer.kind).toBe('paused');
    expect(mesh.writes[0]!.approvals).toMatchObject([
      { toolName: 'resources_delete', expiresInMs: 2_000, onTimeout: ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT },
    ]);
  });
});

describe('an event out of phase', () => {
  /** The value of the sample `series` in the Prometheus text of this process (0 when never recorded). */
  const sampleOf = (text: string, series: string) =>
    Number(
      text
        .split('\n')
        .find((line) => line.startsWith(`${series} `))
        ?.split(' ')[1] ?? 0,
    );
  const SERIES = 'asg_run_out_of_phase_events_total{phase="starting",event="written"}';

  it('is logged as an error and counted in asg_run_out_of_phase_events_total, by phase and event', async () => {
    const mesh = new FakeMesh();
    const before = sampleOf(await prometheusText(), SERIES);
    const logged = vi.spyOn(testLog, 'error');
    const activation: Activation = { conversationId: CONVERSATION, watched: false, conversation: mesh.snapshot(), holdsTurn: false };
    try {
      // A write's answer for a run that asked for nothing: nothing is done with it, and nothing else is in flight.
      await expect(driverOf(mesh, simpleEnv()).drive(freshRun('simple', 0), { kind: 'written', revision: 1 }, activation)).rejects.toThrow(
        /the run stalled/,
      );
      expect(logged).toHaveBeenCalledWith('run event out of phase; nothing was done with it', {
        conversation: CONVERSATION,
        phase: 'starting',
        event: 'written',
        detail: 'the run has not started',
      });
    } finally {
      logged.mockRestore();
    }
    expect(sampleOf(await prometheusText(), SERIES)).toBe(before + 1);
    expect(mesh.calls).toEqual([]);
  });
});

describe('approval policies: their decisions in the audit', () => {
  const policyEnv = (): MachineEnv => ({
    ...simpleEnv(),
    policies: ApprovalPolicies.compile([
      { name: 'alpha-deletes', tools: ['resources_delete'], when: "args.id == 'alpha'", decide: 'approve' },
      { name: 'no-beta', tools: ['resources_delete'], when: "args.id == 'beta'", decide: 'reject', reason: 'beta stays' },
    ]),
  });

  it("a policy's approval is audited before its call runs, and the broker is told why it runs without an approval", async () => {
    const mesh = new FakeMesh({
      model: [
        [toolCall('c1', 'resources_delete', { id: 'alpha' }), finish()],
        [delta('Deleted.'), finish()],
      ],
    });
    const { answer } = await startTurn(mesh, policyEnv());
    expect(answer).toEqual({ kind: 'answered', response: 'Deleted.' });
    expect(mesh.calls.filter((call) => call === 'store.appendAudit' || call.startsWith('tools.callTool'))).toEqual([
      'store.appendAudit',
      'tools.callTool resources_delete',
    ]);
    expect(mesh.toolCalls[0]).toMatchObject({
      name: 'resources_delete',
      approvalUuid: '',
      unapprovedReason: 'approved by policy "alpha-deletes"',
    });
    expect(mesh.audit).toHaveLength(1);
    expect(mesh.audit[0]).toMatchObject({ kind: 'approval.decided', actor: 'policy:alpha-deletes', via: 'policy', subject: CONVERSATION });
    expect(JSON.parse(mesh.audit[0]!.detailJson)).toEqual({
      conversation_id: CONVERSATION,
      tool_name: 'resources_delete',
      tool_call_id: 'c1',
      args_hash: callHash('resources_delete', { id: 'alpha' }),
      approved: true,
      status: 'approved',
      policy: 'alpha-deletes',
    });
  });

  it('a call whose approval cannot be audited does not run; the model reads why', async () => {
    const mesh = new FakeMesh({
      model: [
        [toolCall('c1', 'resources_delete', { id: 'alpha' }), finish()],
        [delta('Could not.'), finish()],
      ],
    });
    mesh.before.appendAudit = () => {
      throw new RpcError(GrpcStatus.UNAVAILABLE, 'the store is away', '/asg.store.v1.ConversationStoreService/AppendAudit');
    };
    const { answer } = await startTurn(mesh, policyEnv());
    expect(answer).toEqual({ kind: 'answered', response: 'Could not.' });
    expect(mesh.toolCalls).toEqual([]);
    const told = mesh.modelCalls[1]!.request.messages.at(-1)!.toolResults[0]!;
    expect(told.output).toContain(
      'resources_delete was not executed: the approval of policy "alpha-deletes" could not be written to the audit',
    );
  });

  it("a policy's rejection is audited, and nothing runs", async () => {
    const mesh = new FakeMesh({
      model: [
        [toolCall('c1', 'resources_delete', { id: 'beta' }), finish()],
        [delta('Kept.'), finish()],
      ],
    });
    const { answer } = await startTurn(mesh, policyEnv());
    expect(answer).toEqual({ kind: 'answered', response: 'Kept.' });
    expect(mesh.toolCalls).toEqual([]);
    expect(mesh.audit).toHaveLength(1);
    expect(mesh.audit[0]).toMatchObject({ actor: 'policy:no-beta', via: 'policy' });
    expect(JSON.parse(mesh.audit[0]!.detailJson)).toMatchObject({ approved: false, status: 'rejected', reason: 'beta stays' });
  });
});
