import { Dialect } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import type { DialectSpeaker } from './dialect.js';
import { typeParts } from './type-parts.js';
import { v0_3 } from './v0_3.js';
import { v1_0 } from './v1_0.js';

export type { DialectSpeaker, OutgoingMessage } from './dialect.js';

/** The order a peer without a usable card is probed in: newest first. */
export const PROBE_ORDER: readonly DialectSpeaker[] = [v1_0, v0_3, typeParts];

export function speakerFor(dialect: Dialect): DialectSpeaker {
  switch (dialect) {
    case Dialect.DIALECT_V1_0:
      return v1_0;
    case Dialect.DIALECT_V0_3:
      return v0_3;
    case Dialect.DIALECT_TYPE_PARTS:
      return typeParts;
    default:
      throw new Error(`no speaker for dialect ${dialect}`);
  }
}
