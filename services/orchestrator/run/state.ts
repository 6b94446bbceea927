import { z } from 'zod';
import type { PipelineView } from '../../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Run } from '../../../gen/ts/asg/store/v1/store.js';

/**
 * A run as a value: what a conversation's run (one user message through the agent, until it
 * answers) must keep between requests. The store holds it as opaque bytes with
 * RUN_SCHEMA_VERSION (store.proto, Run); only this module reads and writes those bytes.
 *
 * Versions:
 *  - 0: the JSON stored as a conversation's pipeline state before runs were versioned values
 *    (snake_case, agent trees only); the store's migration moved it here unread.
 *  - 1: this module's JSON (StoredRun), for both modes: simple mode is a tree of one node.
 *  - 2: a tree run also keeps its checkpoint (where its walk stands, written when a node
 *    finishes). A version-1 run has none: it reads as a run stored before checkpoints, which a
 *    takeover cannot resume part-way through.
 * A simple-mode pause stored before then kept no state at all: legacySimpleRun.
 */
export const RUN_SCHEMA_VERSION = 2;

const pendingCallSchema = z.object({
  approvalUuid: z.string(),
  /** Child indexes from the root to the paused node ([] in simple mode). */
  path: z.array(z.number().int().nonnegative()),
  outputKey: z.string(),
  /** sha256 of the nodes on `path` (domain/tree.ts): a resume checks the tree still leads there. */
  fingerprint: z.string(),
  /** The iteration (1-based) each loop above the node was in, by the loop's path. */
  loopIterations: z.record(z.string(), z.number().int()),
  /** How many of the node's latest messages are its steps in this run before the gated call's result; null in states of version 0 that predate the count. */
  nodeMessages: z.number().int().nonnegative().nullable(),
  /** The gated call and the hash of its arguments (common/call-hash.ts); empty in migrated states. */
  toolName: z.string(),
  argsHash: z.string(),
  /** The call waits for a human's answer to its MCP server's question, not for an approval; what the server asked. */
  input: z.object({ server: z.string(), requestState: z.string(), requests: z.record(z.string(), z.unknown()) }).optional(),
});

const branchOutputSchema = z.object({ output: z.string(), exitLoop: z.boolean() });

/** Where a container node of the tree stands in the walk: the child running, and what finished before it. */
const walkEntrySchema = z.discriminatedUnion('kind', [
  /** `index`: the child running; `output`: the last finished child's. */
  z.object({ kind: z.literal('sequential'), index: z.number().int().nonnegative(), output: z.string() }),
  /** `iteration` (1-based) and the child running in it; `output`: the last non-empty output so far. */
  z.object({ kind: z.literal('loop'), iteration: z.number().int().positive(), index: z.number().int().nonnegative(), output: z.string() }),
  /** The finished branches' outputs, by the branch's index. */
  z.object({ kind: z.literal('parallel'), done: z.record(z.string(), branchOutputSchema) }),
]);

/**
 * A tree run's checkpoint, written with every node's finish: the finished work a takeover does
 * not do again. `walk` holds each container node on its way (by path, "" the root); a leaf node
 * on its way is not in it (it runs again from its start). `tree`: the whole tree's fingerprint
 * (domain/tree.ts), so that a changed configuration is never walked from another's positions.
 */
const checkpointSchema = z.object({ tree: z.string(), walk: z.record(z.string(), walkEntrySchema) });

const storedRunSchema = z.object({
  runId: z.string(),
  mode: z.enum(['simple', 'tree']),
  userMessage: z.string(),
  /** Session state: the output_key values of finished nodes. */
  session: z.record(z.string(), z.string()),
  /** Every approval the run waits for, in the order it paused. */
  pending: z.array(pendingCallSchema),
  /** Outputs of finished branches of parallel nodes whose siblings wait, by the branch's path ("0.2"). */
  branchOutputs: z.record(z.string(), branchOutputSchema),
  /** Model calls of the run so far (all nodes, all activations). */
  modelCalls: z.number().int().nonnegative(),
  /** Who sent the run's user message, for the approval policies of its later calls; absent in runs stored before policies. */
  requester: z.object({ name: z.string(), roles: z.array(z.string()) }).optional(),
  /** Agent trees: where the walk stood at the last write (version 2 on; absent in runs stored before checkpoints). */
  checkpoint: checkpointSchema.optional(),
});

/** Version 1: the same run without its checkpoint. */
const storedRunSchemaV1 = storedRunSchema.omit({ checkpoint: true });

export type StoredRun = z.infer<typeof storedRunSchema>;
export type PendingCall = z.infer<typeof pendingCallSchema>;
export type BranchOutput = z.infer<typeof branchOutputSchema>;
export type WalkEntry = z.infer<typeof walkEntrySchema>;
export type Checkpoint = z.infer<typeof checkpointSchema>;

/** The pipeline state as stored before runs were versioned values (version 0). */
const legacySchema = z.object({
  paused_node_path: z.array(z.number().int()).default([]),
  paused_node_output_key: z.string().default(''),
  session_state: z.record(z.string(), z.string()).default({}),
  user_message: z.string().default(''),
  tree_fingerprint: z.string().optional(),
  pauses: z
    .array(
      z.object({
        approval_uuid: z.string(),
        node_path: z.array(z.number().int()),
        output_key: z.string().default(''),
        tree_fingerprint: z.string().default(''),
        loop_iterations: z.record(z.string(), z.number().int()).default({}),
        node_messages: z.number().int().optional(),
      }),
    )
    .optional(),
  branch_outputs: z.record(z.string(), z.object({ output: z.string(), exit_loop: z.boolean() })).optional(),
  run_id: z.string().optional(),
});

/** A stored run that cannot be read: corrupt bytes, or a version this release does not know. */
export class UnreadableRun extends Error {}

export function encodeRun(run: StoredRun): Pick<Run, 'state' | 'schemaVersion'> {
  return { state: Buffer.from(JSON.stringify(run)), schemaVersion: RUN_SCHEMA_VERSION };
}

/**
 * The run in a stored record, migrated to the current version. `pendingUuid` is the
 * conversation's first pending approval: a version-0 state from before several pauses
 * existed names its one pause only through it.
 */
export function decodeRun(record: Pick<Run, 'state' | 'schemaVersion'>, pendingUuid = ''): StoredRun {
  const json = parseJson(record.state);
  switch (record.schemaVersion) {
    case 0: {
      const parsed = legacySchema.safeParse(json);
      if (!parsed.success)
        throw new UnreadableRun(
          `the stored run does not match schema version 0 (the pipeline state stored before runs were versioned values): ${firstProblem(parsed.error)}`,
        );
      return fromLegacy(parsed.data, pendingUuid);
    }
    case 1: {
      // Written before checkpoints: the same run, with no checkpoint (a key of that name is not one).
      const parsed = storedRunSchemaV1.safeParse(json);
      if (!parsed.success) throw new UnreadableRun(`the stored run does not match schema version 1: ${firstProblem(parsed.error)}`);
      return parsed.data;
    }
    case 2: {
      const parsed = storedRunSchema.safeParse(json);
      if (!parsed.success) throw new UnreadableRun(`the stored run does not match schema version 2: ${firstProblem(parsed.error)}`);
      return parsed.data;
    }
    default:
      throw new UnreadableRun(
        `the stored run has schema version ${record.schemaVersion}, which this release (version ${RUN_SCHEMA_VERSION}) cannot read; it was written by a newer release`,
      );
  }
}

/** The first thing wrong with a stored run, with where it is ("pending.0.path: …"). */
function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    throw new UnreadableRun(`the stored run is not valid JSON: ${(error as Error).message}`);
  }
}

function fromLegacy(legacy: z.infer<typeof legacySchema>, pendingUuid: string): StoredRun {
  const pauses =
    legacy.pauses && (legacy.pauses.length > 0 || legacy.paused_node_path.length === 0)
      ? legacy.pauses
      : [
          {
            approval_uuid: pendingUuid,
            node_path: legacy.paused_node_path,
            output_key: legacy.paused_node_output_key,
            tree_fingerprint: legacy.tree_fingerprint ?? '',
            loop_iterations: {},
            node_messages: undefined,
          },
        ];
  return {
    runId: legacy.run_id ?? '',
    mode: 'tree',
    userMessage: legacy.user_message,
    session: legacy.session_state,
    pending: pauses
      .filter((pause) => pause.approval_uuid !== '')
      .map((pause) => ({
        approvalUuid: pause.approval_uuid,
        path: pause.node_path,
        outputKey: pause.output_key,
        fingerprint: pause.tree_fingerprint,
        loopIterations: pause.loop_iterations,
        nodeMessages: pause.node_messages ?? null,
        toolName: '',
        argsHash: '',
      })),
    branchOutputs: Object.fromEntries(
      Object.entries(legacy.branch_outputs ?? {}).map(([path, branch]) => [path, { output: branch.output, exitLoop: branch.exit_loop }]),
    ),
    modelCalls: 0,
  };
}

/**
 * The run of a simple-mode conversation paused before runs were versioned values: it stored no
 * state, only the approval; the conversation's history is all a simple run needs.
 */
export function legacySimpleRun(approval: { uuid: string; toolName: string; argsHash: string }): StoredRun {
  return {
    runId: '',
    mode: 'simple',
    userMessage: '',
    session: {},
    pending: [
      {
        approvalUuid: approval.uuid,
        path: [],
        outputKey: '',
        fingerprint: '',
        loopIterations: {},
        nodeMessages: null,
        toolName: approval.toolName,
        argsHash: approval.argsHash,
      },
    ],
    branchOutputs: {},
    modelCalls: 0,
  };
}

/**
 * What REST shows of a run as "pipeline_state" (the first pause's fields, with every pause);
 * none for simple mode, nor for a tree run on its way that waits for nothing (only its
 * checkpoint is stored: the pipeline state describes a paused pipeline).
 */
export function pipelineView(run: StoredRun): PipelineView | undefined {
  if (run.mode !== 'tree') return undefined;
  if (run.pending.length === 0 && run.checkpoint) return undefined;
  const first = run.pending[0];
  return {
    pausedNodePath: first?.path ?? [],
    pausedNodeOutputKey: first?.outputKey ?? '',
    sessionState: { ...run.session },
    userMessage: run.userMessage,
    pauses: run.pending.map((pause) => ({
      approvalUuid: pause.approvalUuid,
      pausedNodePath: [...pause.path],
      pausedNodeOutputKey: pause.outputKey,
      loopIterations: { ...pause.loopIterations },
    })),
    branchOutputs: Object.fromEntries(Object.entries(run.branchOutputs).map(([path, branch]) => [path, branch.output])),
  };
}
