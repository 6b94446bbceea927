import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { modelErrorCategory } from './error-category.js';

describe('modelErrorCategory', () => {
  it('names what the reader can do about a failed model call', () => {
    expect(modelErrorCategory(GrpcStatus.INVALID_ARGUMENT)).toBe('invalid request');
    expect(modelErrorCategory(GrpcStatus.UNAVAILABLE)).toBe('transient');
    expect(modelErrorCategory(GrpcStatus.DEADLINE_EXCEEDED)).toBe('transient');
    expect(modelErrorCategory(GrpcStatus.RESOURCE_EXHAUSTED)).toBe('transient');
    expect(modelErrorCategory(GrpcStatus.FAILED_PRECONDITION)).toBe('provider');
    expect(modelErrorCategory(GrpcStatus.INTERNAL)).toBe('internal');
    expect(modelErrorCategory(undefined)).toBe('internal');
  });
});
