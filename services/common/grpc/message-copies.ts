import type { AnyMethod, MessageCopies, MessageCopy } from './in-process.js';

/** What ts-proto generates for each message type: `fromPartial` builds a new message of the type's own fields. */
interface MessageFns {
  fromPartial(object: unknown): unknown;
}

/**
 * The copies the in-process transport makes instead of encoding and decoding protobuf, for every
 * method of the generated service definitions in `modules` (the gen/ts modules, as namespaces).
 *
 * A copy keeps the two promises of the bytes: it shares nothing with the original, and it holds
 * only what the proto carries. ts-proto's `fromPartial` of the method's request (or response)
 * type builds a new message of that type's fields only — every field, defaults for what is
 * missing, nested messages, lists and maps rebuilt — and drops whatever else the object had. What
 * it hands on as it found it (a `google.protobuf.Struct` as a plain object, a Timestamp's Date,
 * the Buffer of a `bytes` field) is then cloned, found by walking the copy beside the original:
 * a value of the copy that is the very object of the original at the same place was not rebuilt.
 * The copy costs a walk of the message's objects; the bytes cost encoding every string as UTF-8
 * and decoding it back, twice a call.
 *
 * The types are found by the proto's naming rule for requests and responses (every method M
 * takes `MRequest` and returns `MResponse`, as buf lint requires), and each pairing is checked:
 * the definition's own decoder and the type's `fromPartial` must give the same empty message. A
 * method whose types are not found or do not match, or a message holding a value that is not
 * plain data (a class instance inside a Struct), crosses as protobuf bytes as before.
 */
export function messageCopies(modules: ReadonlyArray<Record<string, unknown>>): MessageCopies {
  const copies = new Map<string, { request: MessageCopy; response: MessageCopy }>();
  for (const module of modules) {
    for (const definition of Object.values(module)) {
      if (!isServiceDefinition(definition)) continue;
      for (const method of Object.values(definition)) {
        const name = method.path.slice(method.path.lastIndexOf('/') + 1);
        const request = messageFns(module[`${name}Request`], method.requestDeserialize);
        const response = messageFns(module[`${name}Response`], method.responseDeserialize);
        if (!request || !response) continue;
        copies.set(method.path, {
          request: copyOf(request, (value) => method.requestDeserialize(method.requestSerialize(value))),
          response: copyOf(response, (value) => method.responseDeserialize(method.responseSerialize(value))),
        });
      }
    }
  }
  return { get: (path) => copies.get(path) };
}

function isServiceDefinition(value: unknown): value is Record<string, AnyMethod> {
  if (typeof value !== 'object' || value === null) return false;
  const methods = Object.values(value);
  return methods.length > 0 && methods.every((method) => typeof method?.path === 'string' && typeof method.requestSerialize === 'function');
}

/** The type's functions, when they make the same empty message as the method's decoder does. */
function messageFns(candidate: unknown, deserialize: (bytes: Buffer) => unknown): MessageFns | undefined {
  if (typeof (candidate as MessageFns | undefined)?.fromPartial !== 'function') return undefined;
  const fns = candidate as MessageFns;
  return sameData(fns.fromPartial({}), deserialize(Buffer.alloc(0))) ? fns : undefined;
}

function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b) || Buffer.isBuffer(a) !== Buffer.isBuffer(b)) return false;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

class NotPlainData extends Error {}

function copyOf(fns: MessageFns, asBytes: MessageCopy): MessageCopy {
  return (value) => {
    try {
      return unshare(fns.fromPartial(value), value);
    } catch (error) {
      if (error instanceof NotPlainData) return asBytes(value);
      throw error;
    }
  };
}

/** `copy` with every object it shares with `original` (at the same place) replaced by a clone. */
function unshare(copy: unknown, original: unknown): unknown {
  if (typeof copy !== 'object' || copy === null) return copy;
  if (copy === original) return cloneData(copy);
  if (copy instanceof Date || ArrayBuffer.isView(copy)) return copy;
  const from = typeof original === 'object' && original !== null ? (original as Record<string, unknown>) : undefined;
  if (Array.isArray(copy)) {
    for (let index = 0; index < copy.length; index++) copy[index] = unshare(copy[index], from?.[index]);
    return copy;
  }
  const fields = copy as Record<string, unknown>;
  for (const key of Object.keys(fields)) fields[key] = unshare(fields[key], from?.[key]);
  return copy;
}

/** A deep clone of what a Struct, a Value, a Timestamp or `bytes` can hold; anything else is not plain data. */
function cloneData(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneData);
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof Uint8Array) return Buffer.from(value);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new NotPlainData();
  const clone: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // An own `__proto__` key is data, as JSON.parse makes it: assigned, it would set the prototype.
    if (key === '__proto__')
      Object.defineProperty(clone, key, { value: cloneData(field), enumerable: true, writable: true, configurable: true });
    else clone[key] = cloneData(field);
  }
  return clone;
}

/** The copies for every service of the mesh, from the generated modules (loaded here, beside the services that load them too). */
export async function loadMessageCopies(): Promise<MessageCopies> {
  return messageCopies(
    await Promise.all([
      import('../../../gen/ts/asg/a2a/v1/a2a.js'),
      import('../../../gen/ts/asg/llm/v1/llm.js'),
      import('../../../gen/ts/asg/orchestrator/v1/orchestrator.js'),
      import('../../../gen/ts/asg/store/v1/store.js'),
      import('../../../gen/ts/asg/tools/v1/tools.js'),
    ]),
  );
}
