import { GrpcStatus, RpcError, ServiceError } from '../../services/common/grpc/errors.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { ConversationBusy } from './busy.js';
import { LOOK_AGAIN_AFTER_SECONDS, OutcomeUnknown } from './outcome-unknown.js';
import { BODY_LIMIT_BYTES } from './inputs.js';

/**
 * Every failure becomes an HTTP status and a message, never a crash: gRPC statuses from the
 * services, the JSON body parser's rejections, and anything unexpected. Messages pass through
 * secret redaction (rule 5); stack traces never leave the process. Each face wraps the result
 * in its own shape: REST's `{"error": "…"}` (rest/error-reply.ts), JSON-RPC errors
 * (a2a/jsonrpc.ts), tRPC codes (trpc/errors.ts), MCP tool errors (mcp/server.ts).
 */

export interface Failure {
  status: number;
  /** Redacted, fit to show the caller. */
  message: string;
  /** The conversation the failure is about (a busy one, one whose outcome is unknown), for faces that name it (REST's `conversation_id`). */
  conversationId?: string;
  /** `unknown`: the request may have done all or part of what it asked (OutcomeUnknown); absent: nothing was done. */
  outcome?: 'unknown';
  /** The approval of a decision whose outcome is unknown (REST's `approval_uuid`). */
  approvalUuid?: string;
  /** Seconds after which to look again (HTTP `Retry-After`). */
  retryAfterSeconds?: number;
  /** True for failures nobody anticipated: worth an error line in the log. */
  unexpected: boolean;
}

export function httpStatusForGrpc(code: GrpcStatus): number {
  switch (code) {
    case GrpcStatus.NOT_FOUND:
      return 404;
    case GrpcStatus.INVALID_ARGUMENT:
      return 400;
    case GrpcStatus.FAILED_PRECONDITION:
    case GrpcStatus.ABORTED:
    // A second vote of one voter on an approval's quorum.
    case GrpcStatus.ALREADY_EXISTS:
      return 409;
    // A vote a quorum does not count: the voter lacks its role, or asked for the call (not_requester).
    case GrpcStatus.PERMISSION_DENIED:
      return 403;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 504;
    case GrpcStatus.UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

// "/asg.store.v1.ConversationStoreService/GetConversation" → the service's everyday name.
const SERVICE_NAMES: Record<string, string> = { orchestrator: 'the orchestrator', store: 'the conversation store' };

function describeCall(method: string): { service: string; call: string } {
  const [qualifiedService = '', call = method] = method.replace(/^\//, '').split('/');
  const area = qualifiedService.split('.')[1] ?? '';
  return { service: SERVICE_NAMES[area] ?? (qualifiedService || 'a backend service'), call };
}

// grpc-js ends connection failures with "Resolution note: " even when it has no note.
function tidyGrpcText(message: string): string {
  return message.replace(/\s*Resolution note:\s*$/, '').trim();
}

function rpcErrorMessage(error: RpcError): string {
  const { service, call } = describeCall(error.method);
  const detail = tidyGrpcText(error.message);
  // The downstream message already says what was wrong for the caller's own mistakes
  // (unknown id, bad argument). For outages it matters which call failed; the failing
  // hop may also be further down (the orchestrator forwards the tool broker's UNAVAILABLE),
  // so the text names the call made, not a culprit.
  switch (error.code) {
    case GrpcStatus.NOT_FOUND:
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.FAILED_PRECONDITION:
    case GrpcStatus.ABORTED:
    case GrpcStatus.ALREADY_EXISTS:
    case GrpcStatus.PERMISSION_DENIED:
      return error.message;
    case GrpcStatus.UNAVAILABLE:
      return `service unavailable: ${call} on ${service} failed: ${detail}`;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return `deadline exceeded: ${call} on ${service} did not finish in time: ${detail}`;
    default:
      return `${call} on ${service} failed: ${detail}`;
  }
}

/** The shape of the errors the JSON body parser (body-parser via express.json) passes on. */
interface BodyParserError {
  type: string;
  status: number;
  message: string;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    error instanceof Error &&
    typeof (error as Partial<BodyParserError>).type === 'string' &&
    typeof (error as Partial<BodyParserError>).status === 'number'
  );
}

function bodyParserMessage(error: BodyParserError): string {
  switch (error.type) {
    case 'entity.parse.failed':
      return `malformed JSON body: ${error.message}`;
    case 'entity.too.large':
      return `the request body is larger than the limit of ${BODY_LIMIT_BYTES / (1024 * 1024)} MB`;
    case 'request.aborted':
      return 'the request body was cut off before it was complete';
    default:
      return error.message;
  }
}

/** An HTTP error that a library raised on purpose (e.g. a malformed %-escape in the path). */
function clientErrorStatus(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const status = (error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

export function failureOf(error: unknown): Failure {
  if (error instanceof ConversationBusy) {
    return { status: 409, message: error.message, conversationId: error.conversationId, unexpected: false };
  }
  if (error instanceof OutcomeUnknown) {
    return {
      // Stopping, the replica handed the run on: 503 and when to look again. Otherwise the gateway cannot tell how it ended: 504.
      status: error.handedBack ? 503 : 504,
      message: redactSecrets(error.message),
      outcome: 'unknown',
      ...(error.conversationId !== undefined && { conversationId: error.conversationId }),
      ...(error.approvalUuid !== undefined && { approvalUuid: error.approvalUuid }),
      ...(error.handedBack && { retryAfterSeconds: LOOK_AGAIN_AFTER_SECONDS }),
      unexpected: false,
    };
  }
  if (error instanceof RpcError) {
    const status = httpStatusForGrpc(error.code);
    return { status, message: redactSecrets(rpcErrorMessage(error)), unexpected: status === 500 };
  }
  if (error instanceof ServiceError) {
    const status = httpStatusForGrpc(error.code);
    return { status, message: redactSecrets(error.message), unexpected: status === 500 };
  }
  if (isBodyParserError(error) && error.status < 500) {
    return { status: error.status, message: redactSecrets(bodyParserMessage(error)), unexpected: false };
  }
  const clientStatus = clientErrorStatus(error);
  if (clientStatus !== undefined) {
    return { status: clientStatus, message: redactSecrets((error as Error).message), unexpected: false };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, message: redactSecrets(`internal error: ${message}`), unexpected: true };
}
