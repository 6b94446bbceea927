import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration: a number of seconds (`30`, `1.5`) or a string with a unit (`500ms`, `30s`,
 * `2m`, `1h`, `7d`). Parsed to milliseconds.
 */
export const duration = z
  .union([
    z.number().positive(),
    z.string().regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'a duration such as "500ms", "30s", "2m", "7d" or a number of seconds'),
  ])
  .transform((value) => {
    if (typeof value === 'number') return Math.round(value * 1000);
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value)!;
    return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  });
