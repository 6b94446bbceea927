import { Dialect, type DescribeAgentResponse, type RemoteTask } from '../../gen/ts/asg/a2a/v1/a2a.js';
import type { RequestContext } from '../common/context.js';
import { failedPrecondition, GrpcStatus, invalidArgument, notFound, ServiceError } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { speakerFor, type DialectSpeaker, type OutgoingMessage } from './dialects/index.js';
import type { StreamingSpeaker } from './dialects/dialect.js';
import { postJsonRpc, type JsonRpcOutcome, type JsonRpcRequest } from './http.js';
import { sendStreaming } from './stream.js';
import { displayUrl, openOutboundCall, type OutboundCall, type PeerRef } from './outbound.js';
import { isDialectMismatch, PeerDirectory, type PeerProfile } from './probe.js';
import { toRemoteTask, UnreadableAnswer, type TaskView } from './remote-task.js';

/** A2A's "task not found" (v0.3 and v1.0 alike; type-parts servers use it too). */
const TASK_NOT_FOUND = -32001;

/**
 * The bridge's three operations, transport-free: open the call (hop guard, headers,
 * deadline), find the peer's dialect, ask in it, read the answer into a RemoteTask, and turn
 * every way that can fail into the status the contract names.
 */
export class A2aBridge {
  constructor(
    private readonly maxDepth: number,
    private readonly log: Logger,
    private readonly directory = new PeerDirectory(log),
  ) {}

  async describeAgent(peer: PeerRef, caller: RequestContext | undefined): Promise<DescribeAgentResponse> {
    return this.logged(peer, 'DescribeAgent', async () => {
      const call = openOutboundCall(peer, caller, this.maxDepth);
      const profile = await this.directory.resolve(call);
      return {
        name: profile.card?.name || peer.name,
        description: profile.card?.description ?? '',
        dialect: profile.dialect,
        endpointUrl: profile.endpoint,
        skills: profile.card?.skills ?? [],
      };
    });
  }

  async sendMessage(peer: PeerRef, message: OutgoingMessage, caller: RequestContext | undefined): Promise<RemoteTask> {
    return this.logged(peer, 'SendMessage', async () => {
      const call = openOutboundCall(peer, caller, this.maxDepth);
      const profile = await this.directory.resolve(call);
      const speaker = speakerFor(profile.dialect);
      const streaming = profile.streaming ? speaker.streaming : undefined;
      const task = streaming
        ? await this.sendStreaming(call, profile, speaker, streaming, message)
        : await this.ask(call, profile, speaker, speaker.sendMessage(message), (result) => speaker.readSendResult(result));
      this.log.info('a2a message sent', {
        peer: peer.name,
        dialect: Dialect[profile.dialect],
        task: task.id,
        state: task.state,
        continued: message.taskId !== undefined,
        streamed: streaming !== undefined,
        hops: call.hops,
      });
      return task;
    });
  }

  async getTask(peer: PeerRef, taskId: string, caller: RequestContext | undefined): Promise<RemoteTask> {
    return this.logged(peer, 'GetTask', async () => {
      const call = openOutboundCall(peer, caller, this.maxDepth);
      const profile = await this.directory.resolve(call);
      const speaker = speakerFor(profile.dialect);
      return this.ask(call, profile, speaker, speaker.getTask(taskId), (result) => speaker.readTask(result));
    });
  }

  /** A peer whose card says it streams: the message as a stream, resubscribed if it breaks (stream.ts). */
  private async sendStreaming(
    call: OutboundCall,
    profile: PeerProfile,
    speaker: DialectSpeaker,
    streaming: StreamingSpeaker,
    message: OutgoingMessage,
  ): Promise<RemoteTask> {
    const view = await sendStreaming({
      call,
      endpoint: profile.endpoint,
      headers: speaker.headers,
      speaker: streaming,
      message,
      settle: (request, outcome, read) => this.settle(call, profile, speaker, request, outcome, read),
      getTask: async (taskId) => {
        const request = speaker.getTask(taskId);
        const outcome = await postJsonRpc(call, profile.endpoint, request, speaker.headers);
        return this.settle(call, profile, speaker, request, outcome, (result) => speaker.readTask(result));
      },
      log: this.log,
    }).catch((error: unknown) => {
      // An event of the stream the dialect does not allow.
      if (error instanceof UnreadableAnswer) throw this.unreadable(call, speaker, streaming.sendMessage(message), error);
      throw error;
    });
    return toRemoteTask(view, profile.dialect);
  }

  private unreadable(call: OutboundCall, speaker: DialectSpeaker, request: JsonRpcRequest, error: UnreadableAnswer): ServiceError {
    const where = `${call.peer.name} at ${displayUrl(call.peer.url)}`;
    return failedPrecondition(
      call.scrub(`sub-agent ${where} answered ${request.method} with something ${speaker.label} does not allow: ${error.message}`),
    );
  }

  private async ask(
    call: OutboundCall,
    profile: PeerProfile,
    speaker: DialectSpeaker,
    request: JsonRpcRequest,
    read: (result: unknown) => TaskView,
  ): Promise<RemoteTask> {
    const outcome = await postJsonRpc(call, profile.endpoint, request, speaker.headers);
    return toRemoteTask(this.settle(call, profile, speaker, request, outcome, read), profile.dialect);
  }

  /** What a peer's answer to `request` means: the task it reports, or the failure the contract names. */
  private settle(
    call: OutboundCall,
    profile: PeerProfile,
    speaker: DialectSpeaker,
    request: JsonRpcRequest,
    outcome: JsonRpcOutcome,
    read: (result: unknown) => TaskView,
  ): TaskView {
    const where = `${call.peer.name} at ${displayUrl(call.peer.url)}`;
    if (outcome.kind === 'result') {
      try {
        return read(outcome.result);
      } catch (error) {
        if (!(error instanceof UnreadableAnswer)) throw error;
        throw this.unreadable(call, speaker, request, error);
      }
    }
    if (isDialectMismatch(outcome)) {
      // The peer was redeployed with another version, or its card promised too much: ask again next time.
      this.directory.forget(call.peer.url);
      throw failedPrecondition(
        call.scrub(
          `sub-agent ${where} does not understand ${request.method} in ${speaker.label} any more (${outcome.kind === 'error' ? `JSON-RPC ${outcome.code} ${outcome.message}` : ''}); its card is read again on the next call`,
        ),
      );
    }
    if (outcome.kind === 'error') {
      if (outcome.code === TASK_NOT_FOUND)
        throw notFound(call.scrub(`sub-agent ${where} has no such task: ${outcome.message || 'task not found'}`));
      throw invalidArgument(
        call.scrub(`sub-agent ${where} refused ${request.method}: ${outcome.message || 'no message'} (JSON-RPC ${outcome.code})`),
      );
    }
    if (outcome.status === 401)
      throw new ServiceError(GrpcStatus.UNAUTHENTICATED, `sub-agent ${where} wants credentials the caller did not give (HTTP 401)`);
    if (outcome.status === 403)
      throw new ServiceError(GrpcStatus.PERMISSION_DENIED, `sub-agent ${where} refused the caller's credentials (HTTP 403)`);
    if (outcome.status === 404 || outcome.status === 405) {
      this.directory.forget(call.peer.url);
      throw failedPrecondition(`sub-agent ${where} has no A2A endpoint at ${displayUrl(profile.endpoint)} (${outcome.detail})`);
    }
    throw invalidArgument(call.scrub(`sub-agent ${where} refused ${request.method}: ${outcome.detail}`));
  }

  /** One warning line per failed call, with the code it fails with; the message is already free of the caller's token. */
  private async logged<T>(peer: PeerRef, method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const code = error instanceof ServiceError ? GrpcStatus[error.code] : 'INTERNAL';
      this.log.warn('a2a call failed', { peer: peer.name, method, code, error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }
}
