import type { Dialect } from '../dialect.js';
import { typePartsWire } from './type-parts.js';
import { v03Wire } from './v0_3.js';
import { v10Wire } from './v1_0.js';
import type { DialectWire } from './wire.js';

export type { DialectWire } from './wire.js';

/** Each dialect's writer of tasks and stream events. */
export const WIRES: Readonly<Record<Dialect, DialectWire>> = {
  'type-parts': typePartsWire,
  'v0.3': v03Wire,
  'v1.0': v10Wire,
};
