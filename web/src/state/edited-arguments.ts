/**
 * The arguments of a pending call as the approval card edits them (edit on approve):
 * shown once as formatted JSON, editable, and sent with the approval only when they differ
 * from what the model asked for. Pure, so that it is tested without a browser.
 */

export type ArgumentsEdit =
  /** The text says what the model asked for (reformatting is not an edit). */
  | { kind: 'unchanged' }
  | { kind: 'edited'; value: Record<string, unknown> }
  /** Approving is impossible until the text is a JSON object again. */
  | { kind: 'invalid'; message: string };

export function formatArguments(args: Record<string, unknown>): string {
  return JSON.stringify(args, null, 2);
}

/** JSON with object keys sorted, so that two values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function readArgumentsEdit(text: string, original: Record<string, unknown>): ArgumentsEdit {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', message: `The arguments are not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'invalid', message: 'The arguments must be a JSON object ({ … }).' };
  const edited = value as Record<string, unknown>;
  return canonicalJson(edited) === canonicalJson(original) ? { kind: 'unchanged' } : { kind: 'edited', value: edited };
}

/** How a text about a call ends with its arguments: "… with arguments {…}" (a description), "… with {…}" (a call's note). */
const ARGUMENTS_SUFFIXES = [' with arguments ', ' with '];

/**
 * A text about a call without the arguments it ends with ("resources_add on resources with
 * arguments {…}" → "resources_add on resources", "Calling resources_add with {…}" → "Calling
 * resources_add") when they are the call's own: the card shows them once, in its editor. Any
 * other text is kept whole.
 */
export function descriptionWithoutArguments(description: string, args: Record<string, unknown>): string {
  for (const suffix of ARGUMENTS_SUFFIXES) {
    const at = description.lastIndexOf(suffix);
    if (at < 0) continue;
    try {
      if (canonicalJson(JSON.parse(description.slice(at + suffix.length))) === canonicalJson(args)) return description.slice(0, at);
    } catch {
      // Not JSON after this suffix: try the next, else keep the text whole.
    }
  }
  return description;
}
