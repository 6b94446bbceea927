/**
 * The form of an MCP server's question (an approval of kind `input`): the fields of the
 * flat object schema the server requested — text, number, yes/no and a choice of values, as
 * MCP elicitation allows — and the answer they make. A schema beyond that (several questions
 * at once, nested objects) is answered as JSON instead. Pure, so that it is tested without a
 * browser.
 */

export type InputField =
  | { name: string; label: string; required: boolean; kind: 'text' | 'number' | 'integer' | 'boolean' }
  | { name: string; label: string; required: boolean; kind: 'choice'; options: string[] };

type Schema = Record<string, unknown>;

function fieldOf(name: string, schema: Schema, required: boolean): InputField | undefined {
  const label = typeof schema.title === 'string' ? schema.title : typeof schema.description === 'string' ? schema.description : name;
  if (Array.isArray(schema.enum) && schema.enum.every((option) => typeof option === 'string'))
    return { name, label, required, kind: 'choice', options: schema.enum as string[] };
  switch (schema.type) {
    case 'string':
      return { name, label, required, kind: 'text' };
    case 'number':
    case 'integer':
    case 'boolean':
      return { name, label, required, kind: schema.type };
    default:
      return undefined;
  }
}

/** The fields of `schema`, in its order; undefined when it is not a flat object of such fields. */
export function inputFields(schema: Schema): InputField[] | undefined {
  if (schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields: InputField[] = [];
  for (const [name, property] of Object.entries(schema.properties as Record<string, Schema>)) {
    const field = typeof property === 'object' && property !== null ? fieldOf(name, property, required.has(name)) : undefined;
    if (!field) return undefined;
    fields.push(field);
  }
  return fields;
}

/** What the form's values (as its inputs hold them) answer, or the first problem that stops it from being sent. */
export function inputAnswer(
  fields: InputField[],
  values: Record<string, string | boolean>,
): { answer: Record<string, unknown> } | { problem: string } {
  const answer: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') {
      answer[field.name] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (text === '') {
      if (field.required) return { problem: `${field.label} is required.` };
      continue;
    }
    if (field.kind === 'number' || field.kind === 'integer') {
      const number = Number(text);
      if (!Number.isFinite(number) || (field.kind === 'integer' && !Number.isInteger(number)))
        return { problem: `${field.label} must be ${field.kind === 'integer' ? 'a whole number' : 'a number'}.` };
      answer[field.name] = number;
    } else {
      answer[field.name] = text;
    }
  }
  return { answer };
}
