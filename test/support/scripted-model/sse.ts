/** Server-sent events as the vendors stream them, and the pieces they cut an answer into. */

/** One event: `event: name` where the vendor names its events (Anthropic), then one line of JSON data. */
export function sseEvent(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** Text in the pieces a model streams it in: each word with the whitespace after it. */
export function textPieces(text: string): string[] {
  return text.match(/\s+|\S+\s*/g) ?? [];
}

/** A JSON text in two fragments, as OpenAI and Anthropic stream tool arguments (never whole values). */
export function jsonFragments(json: string): string[] {
  if (json.length < 2) return [json];
  const middle = Math.ceil(json.length / 2);
  return [json.slice(0, middle), json.slice(middle)];
}
