import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The category a failed model call is reported with in the conversation: what the
 * reader can do about it follows from it — fix the request, try again, fix the provider's
 * set-up (key, model access), or report a bug.
 */
export type ModelErrorCategory = 'invalid request' | 'transient' | 'provider' | 'internal';

export function modelErrorCategory(code: GrpcStatus | undefined): ModelErrorCategory {
  switch (code) {
    case GrpcStatus.INVALID_ARGUMENT:
      return 'invalid request';
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return 'transient';
    case GrpcStatus.FAILED_PRECONDITION:
    case GrpcStatus.PERMISSION_DENIED:
    case GrpcStatus.UNAUTHENTICATED:
      return 'provider';
    default:
      return 'internal';
  }
}
