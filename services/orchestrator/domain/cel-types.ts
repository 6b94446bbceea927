import type { CelEnv, CelType } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';

/**
 * A static type check of a parsed CEL expression, for approval policies (approval-policy.ts).
 * @bufbuild/cel 0.6.1 parses and evaluates, but its checker knows only constants and
 * identifiers, so this one walks the whole tree: every identifier must be a declared variable
 * (or a comprehension's), every field of a known record must exist, and every function call
 * must match one of the environment's overloads — the mistakes a policy author makes, found
 * when the configuration loads instead of at the first call. What is only known at run time
 * (a tool's arguments, typed `dyn`) is left to the evaluation, whose errors stop for a human.
 */

/** A type as the check sees it: `dyn` accepts and is accepted by anything. */
export type StaticType =
  | { kind: 'dyn' }
  | { kind: 'scalar'; name: string }
  | { kind: 'list'; element: StaticType }
  | { kind: 'map'; key: StaticType; value: StaticType }
  /** A value with known fields (the policy's `conversation`, `requester`); a CEL map at run time. */
  | { kind: 'record'; name: string; fields: Readonly<Record<string, StaticType>> };

export const DYN: StaticType = { kind: 'dyn' };
const scalar = (name: string): StaticType => ({ kind: 'scalar', name });
export const BOOL = scalar('bool');
const INT = scalar('int');
export const STRING = scalar('string');
export const TIMESTAMP = scalar('google.protobuf.Timestamp');

/** A problem of the expression, at a character offset of its text. */
export class CelTypeError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export function describeType(type: StaticType): string {
  switch (type.kind) {
    case 'dyn':
      return 'dyn';
    case 'scalar':
      return type.name;
    case 'list':
      return `list(${describeType(type.element)})`;
    case 'map':
      return `map(${describeType(type.key)}, ${describeType(type.value)})`;
    case 'record':
      return type.name;
  }
}

function fromCel(type: CelType): StaticType {
  switch (type.kind) {
    case 'scalar':
      return type.scalar === 'dyn' ? DYN : scalar(type.scalar);
    case 'list':
      return { kind: 'list', element: fromCel(type.element) };
    case 'map':
      return { kind: 'map', key: fromCel(type.key), value: fromCel(type.value) };
    default:
      return scalar(type.name);
  }
}

const NUMERIC = new Set(['int', 'uint', 'double']);

/** Whether a value of `actual` may stand where `expected` is asked for. */
function fits(actual: StaticType, expected: StaticType): boolean {
  if (actual.kind === 'dyn' || expected.kind === 'dyn') return true;
  // A record is a CEL map of strings at run time.
  if (actual.kind === 'record') return expected.kind === 'record' ? actual.name === expected.name : expected.kind === 'map';
  if (actual.kind === 'scalar' || expected.kind === 'scalar')
    return actual.kind === 'scalar' && expected.kind === 'scalar' && actual.name === expected.name;
  if (actual.kind === 'list') return expected.kind === 'list' && fits(actual.element, expected.element);
  return expected.kind === 'map' && fits(actual.key, expected.key) && fits(actual.value, expected.value);
}

function same(a: StaticType, b: StaticType): boolean {
  return describeType(a) === describeType(b);
}

/** The type of `expr` in `env` with `variables`; throws CelTypeError at the first problem. */
export function typeOf(
  expr: Expr,
  env: CelEnv,
  variables: ReadonlyMap<string, StaticType>,
  positions: Readonly<Record<string, number>>,
): StaticType {
  const fail = (node: Expr, message: string): never => {
    throw new CelTypeError(message, positions[String(node.id)] ?? 0);
  };

  const overload = (node: Expr, name: string, target: StaticType | undefined, args: StaticType[]): StaticType => {
    const group = env.funcs.find(name);
    if (!group) return fail(node, `undeclared reference to function '${name}'`);
    const results: StaticType[] = [];
    for (const func of group) {
      if ((func.target === undefined) !== (target === undefined) || func.arguments.length !== args.length) continue;
      if (target !== undefined && func.target !== undefined && !fits(target, fromCel(func.target))) continue;
      if (args.every((arg, index) => fits(arg, fromCel(func.arguments[index]!)))) results.push(fromCel(func.result));
    }
    if (results.length === 0) {
      const applied = [...(target ? [target] : []), ...args].map(describeType).join(', ');
      return fail(node, `found no matching overload for '${name}' applied to '(${applied})'`);
    }
    return results.every((result) => same(result, results[0]!)) ? results[0]! : DYN;
  };

  const visit = (node: Expr, scope: ReadonlyMap<string, StaticType>): StaticType => {
    const kind = node.exprKind;
    switch (kind.case) {
      case 'constExpr':
        switch (kind.value.constantKind.case) {
          case 'boolValue':
            return BOOL;
          case 'int64Value':
            return INT;
          case 'uint64Value':
            return scalar('uint');
          case 'doubleValue':
            return scalar('double');
          case 'stringValue':
            return STRING;
          case 'bytesValue':
            return scalar('bytes');
          case 'nullValue':
            return scalar('null_type');
          default:
            return DYN;
        }
      case 'identExpr': {
        const type = scope.get(kind.value.name) ?? variables.get(kind.value.name);
        if (!type) {
          const known = [...variables.keys()].join(', ');
          return fail(node, `undeclared reference to '${kind.value.name}' (the variables are ${known})`);
        }
        return type;
      }
      case 'selectExpr': {
        const operand = visit(kind.value.operand ?? node, scope);
        const field = kind.value.field;
        let type: StaticType;
        if (operand.kind === 'record') {
          const known = operand.fields[field];
          if (!known)
            return fail(node, `${operand.name} has no field '${field}' (its fields are ${Object.keys(operand.fields).join(', ')})`);
          type = known;
        } else if (operand.kind === 'map') type = operand.value;
        else if (operand.kind === 'dyn') type = DYN;
        else return fail(node, `a value of type '${describeType(operand)}' has no fields ('.${field}')`);
        return kind.value.testOnly ? BOOL : type;
      }
      case 'callExpr': {
        const { function: name, target, args } = kind.value;
        const targetType = target ? visit(target, scope) : undefined;
        const argTypes = args.map((arg) => visit(arg, scope));
        return callType(node, name, targetType, argTypes);
      }
      case 'listExpr': {
        const elements = kind.value.elements.map((element) => visit(element, scope));
        const first = elements[0];
        return { kind: 'list', element: first && elements.every((element) => same(element, first)) ? first : DYN };
      }
      case 'structExpr': {
        if (kind.value.messageName !== '') return fail(node, `messages (${kind.value.messageName}{…}) cannot be built in a policy`);
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value, scope);
          if (entry.value) visit(entry.value, scope);
        }
        return { kind: 'map', key: DYN, value: DYN };
      }
      case 'comprehensionExpr': {
        const comprehension = kind.value;
        const range = visit(comprehension.iterRange ?? node, scope);
        let element: StaticType;
        if (range.kind === 'list') element = range.element;
        else if (range.kind === 'map') element = range.key;
        else if (range.kind === 'record') element = STRING;
        else if (range.kind === 'dyn') element = DYN;
        else return fail(node, `a value of type '${describeType(range)}' cannot be iterated over`);
        const accumulator = visit(comprehension.accuInit ?? node, scope);
        const inner = new Map(scope);
        inner.set(comprehension.accuVar, accumulator);
        inner.set(comprehension.iterVar, element);
        if (comprehension.iterVar2) inner.set(comprehension.iterVar2, DYN);
        if (comprehension.loopCondition) visit(comprehension.loopCondition, inner);
        if (comprehension.loopStep) visit(comprehension.loopStep, inner);
        const after = new Map(scope);
        after.set(comprehension.accuVar, accumulator);
        return comprehension.result ? visit(comprehension.result, after) : DYN;
      }
      default:
        return fail(node, 'an expression this check does not know');
    }
  };

  const callType = (node: Expr, name: string, target: StaticType | undefined, args: StaticType[]): StaticType => {
    switch (name) {
      case '_&&_':
      case '_||_':
      case '@not_strictly_false':
        args.forEach((arg) => {
          if (!fits(arg, BOOL)) fail(node, `'${name.replaceAll('_', ' ').trim()}' takes bool operands, not '${describeType(arg)}'`);
        });
        return BOOL;
      case '_?_:_': {
        const [condition, whenTrue, whenFalse] = args as [StaticType, StaticType, StaticType];
        if (!fits(condition, BOOL)) fail(node, `the condition of '? :' must be a bool, not '${describeType(condition)}'`);
        return same(whenTrue, whenFalse) ? whenTrue : DYN;
      }
      case '_[_]': {
        const [container, index] = args as [StaticType, StaticType];
        if (container.kind === 'list') {
          if (!fits(index, INT)) fail(node, `a list is indexed by an int, not '${describeType(index)}'`);
          return container.element;
        }
        if (container.kind === 'map') return container.value;
        if (container.kind === 'record') return DYN;
        if (container.kind === 'dyn') return DYN;
        return fail(node, `a value of type '${describeType(container)}' cannot be indexed`);
      }
      case '_==_':
      case '_!=_': {
        // Equality is declared for (dyn, dyn); two known scalar types that can never be equal are a mistake.
        const [left, right] = args as [StaticType, StaticType];
        const comparable =
          left.kind !== 'scalar' ||
          right.kind !== 'scalar' ||
          left.name === right.name ||
          left.name === 'null_type' ||
          right.name === 'null_type' ||
          (NUMERIC.has(left.name) && NUMERIC.has(right.name));
        if (!comparable) fail(node, `found no matching overload for '${name}' applied to '(${left.name}, ${right.name})'`);
        return BOOL;
      }
      default:
        return overload(node, name, target, args);
    }
  };

  return visit(expr, new Map());
}
