/** Small readers for untrusted JSON request bodies, and the token estimate both vendors report. */
export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** About four characters a token, as the vendors' own rule of thumb; never zero for non-empty text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
