/**
 * The `*` / `?` patterns of the configuration (rate limits, approval rules): `*` is any run of
 * characters, `?` exactly one, everything else is literal, and the whole name must match.
 */
export function wildcardPattern(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's');
}
