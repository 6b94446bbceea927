import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * A failure with the gRPC status it should travel with. Services throw these; the server
 * wrapper sends code and message, and clients rethrow them as `RpcError` with the same code.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const notFound = (message: string) => new ServiceError(GrpcStatus.NOT_FOUND, message);
export const invalidArgument = (message: string) => new ServiceError(GrpcStatus.INVALID_ARGUMENT, message);
export const failedPrecondition = (message: string) => new ServiceError(GrpcStatus.FAILED_PRECONDITION, message);
export const unavailable = (message: string) => new ServiceError(GrpcStatus.UNAVAILABLE, message);
export const deadlineExceeded = (message: string) => new ServiceError(GrpcStatus.DEADLINE_EXCEEDED, message);
export const alreadyExists = (message: string) => new ServiceError(GrpcStatus.ALREADY_EXISTS, message);
export const permissionDenied = (message: string) => new ServiceError(GrpcStatus.PERMISSION_DENIED, message);
export const aborted = (message: string) => new ServiceError(GrpcStatus.ABORTED, message);
export const internal = (message: string) => new ServiceError(GrpcStatus.INTERNAL, message);

/** An error received from another service: its gRPC code and its message, nothing else. */
export class RpcError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
    readonly method: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export function isCode(error: unknown, code: GrpcStatus): boolean {
  return (error instanceof RpcError || error instanceof ServiceError) && error.code === code;
}

export { GrpcStatus };

/** Statuses of a call that got no answer (in time, or at all), or failed in a way nobody anticipated. */
const UNANSWERED = new Set<GrpcStatus>([
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.CANCELLED,
  GrpcStatus.UNKNOWN,
  GrpcStatus.INTERNAL,
]);

/**
 * Whether a failed call may still have done what it was asked (a write that may be stored):
 * one that got no answer — its deadline passed, its peer or connection went away — or failed
 * in a way nobody anticipated (anything that is not a gRPC status, too). Every other status is
 * a refusal: nothing was done.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof RpcError || error instanceof ServiceError)) return true;
  return UNANSWERED.has(error.code);
}
