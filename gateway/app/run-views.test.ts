import { describe, expect, it } from 'vitest';
import type { DescribeRunsRequest, DescribeRunsResponse, PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Run } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { approvalRecord, conversationRecord } from '../../test/support/store-records.js';
import { describeRunOf, describeRunsOf } from './run-views.js';

const DESCRIBE_RUNS = '/asg.orchestrator.v1.OrchestratorService/DescribeRuns';

const runOf = (text: string): Run => ({ state: Buffer.from(text), schemaVersion: 1, revision: 4 });
const viewAt = (path: number[]): PipelineView => ({
  pausedNodePath: path,
  pausedNodeOutputKey: 'out',
  sessionState: {},
  userMessage: 'go',
  pauses: [],
  branchOutputs: {},
});

/** The orchestrator's DescribeRuns, answering each run with `answer` and recording every request. */
function fakeOrchestrator(answer: (request: DescribeRunsRequest) => DescribeRunsResponse) {
  const requests: DescribeRunsRequest[] = [];
  return {
    requests,
    async describeRuns(request: DescribeRunsRequest) {
      requests.push(request);
      return answer(request);
    },
  };
}

/** Views the tree runs, by the first character of their state ("t…"), and leaves the others (simple mode) without one. */
const byState = (request: DescribeRunsRequest): DescribeRunsResponse => ({
  views: request.runs.map(({ run }, index) =>
    run!.state.toString().startsWith('t') ? { pipeline: viewAt([index]), inputs: [] } : { inputs: [] },
  ),
});

describe('describeRunsOf', () => {
  it('makes no call when no conversation has a run', async () => {
    const orchestrator = fakeOrchestrator(byState);
    const views = await describeRunsOf(orchestrator, [conversationRecord({ id: 'a' }), conversationRecord({ id: 'b' })]);
    expect(views.size).toBe(0);
    expect(await describeRunOf(orchestrator, conversationRecord())).toBeUndefined();
    expect(orchestrator.requests).toEqual([]);
  });

  it('describes every run of a page in one call, in order, each with its first pending approval, and maps the views back by conversation id', async () => {
    const orchestrator = fakeOrchestrator(byState);
    const waiting = approvalRecord({ uuid: 'u-first' });
    const conversations = [
      conversationRecord({
        id: 'tree',
        run: runOf('tree'),
        pendingApproval: waiting,
        pendingApprovals: [waiting, approvalRecord({ uuid: 'u-second' })],
      }),
      conversationRecord({ id: 'none' }),
      conversationRecord({ id: 'simple', run: runOf('simple') }),
      conversationRecord({ id: 'tree2', run: runOf('tree2') }),
    ];
    const views = await describeRunsOf(orchestrator, conversations);
    expect(orchestrator.requests).toEqual([
      {
        runs: [
          { run: runOf('tree'), pendingApprovalUuid: 'u-first' },
          { run: runOf('simple'), pendingApprovalUuid: '' },
          { run: runOf('tree2'), pendingApprovalUuid: '' },
        ],
      },
    ]);
    // Position 1 was the simple-mode run: it has no pipeline view, so no pipeline_state.
    expect([...views]).toEqual([
      ['tree', viewAt([0])],
      ['tree2', viewAt([2])],
    ]);
  });

  it('fails with INTERNAL when the orchestrator answers another number of views than runs', async () => {
    const orchestrator = fakeOrchestrator(() => ({ views: [{ pipeline: viewAt([0]), inputs: [] }] }));
    const conversations = [conversationRecord({ id: 'a', run: runOf('t1') }), conversationRecord({ id: 'b', run: runOf('t2') })];
    await expect(describeRunsOf(orchestrator, conversations)).rejects.toMatchObject({
      code: GrpcStatus.INTERNAL,
      message: 'the orchestrator described 1 runs of the 2 it was asked for',
    });
  });

  it("passes the orchestrator's failure on as it is, for the faces to map like any backend failure", async () => {
    const outage = new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', DESCRIBE_RUNS);
    const orchestrator = fakeOrchestrator(() => {
      throw outage;
    });
    await expect(describeRunOf(orchestrator, conversationRecord({ run: runOf('t') }))).rejects.toBe(outage);
  });
});
