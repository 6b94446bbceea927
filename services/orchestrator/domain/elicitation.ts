import { firstSchemaProblem } from '../../common/json-schema.js';

/**
 * An MCP server's request for input during a tool call (MCP 2026-07-28
 * `input_required`), as a run keeps it while a human answers: the server's questions (form
 * elicitations keyed by its request ids) and the opaque state the call goes on with. The run
 * stores it with its pause (run/state.ts), so nothing is held open while the human decides.
 */
export interface InputRequest {
  server: string;
  requestState: string;
  /** The server's requests as MCP sends them: {id: {method: "elicitation/create", params: {message, requestedSchema}}}. */
  requests: Record<string, unknown>;
}

interface Question {
  id: string;
  message: string;
  schema: Record<string, unknown> | undefined;
}

function questionsOf(requests: Record<string, unknown>): Question[] {
  return Object.entries(requests).map(([id, request]) => {
    const params = (request as { params?: { message?: unknown; requestedSchema?: unknown } } | undefined)?.params;
    const schema = params?.requestedSchema;
    return {
      id,
      message: typeof params?.message === 'string' ? params.message : '',
      schema: schema && typeof schema === 'object' && !Array.isArray(schema) ? (schema as Record<string, unknown>) : undefined,
    };
  });
}

/** The fields a form asks for, as "name (string, required)". */
function fieldsOf(schema: Record<string, unknown> | undefined): string[] {
  const properties = schema?.properties;
  if (!properties || typeof properties !== 'object') return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties as Record<string, { type?: unknown; description?: unknown }>).map(([name, field]) => {
    const facts = [
      typeof field?.type === 'string' ? field.type : undefined,
      required.has(name) ? 'required' : undefined,
      typeof field?.description === 'string' ? field.description : undefined,
    ].filter(Boolean);
    return facts.length > 0 ? `${name} (${facts.join(', ')})` : name;
  });
}

/** What the approval of an input request says: who asks, what, and which fields the answer has. */
export function inputDescription(toolName: string, input: InputRequest): string {
  const asked = questionsOf(input.requests).map((question) => {
    const fields = fieldsOf(question.schema);
    return `${JSON.stringify(question.message || '(no question text)')}${fields.length > 0 ? ` — answer with: ${fields.join('; ')}` : ''}`;
  });
  return `MCP server ${input.server} asks for input to finish ${toolName}: ${asked.join(' / ')}. Approve with "input" to answer, or reject to decline.`;
}

/** The questions' texts, in the server's order. */
export function inputQuestions(input: InputRequest): string[] {
  return questionsOf(input.requests).map((question) => question.message);
}

/** The schema the answer must fit: one question's requested schema, or an object of them by request id. */
export function requestedSchema(input: InputRequest): Record<string, unknown> {
  const questions = questionsOf(input.requests);
  if (questions.length === 1) return questions[0]!.schema ?? { type: 'object' };
  return {
    type: 'object',
    properties: Object.fromEntries(questions.map((question) => [question.id, question.schema ?? { type: 'object' }])),
    required: questions.map((question) => question.id),
    additionalProperties: false,
  };
}

/** Why `content` does not answer the request (INVALID_ARGUMENT), or undefined when it fits. */
export function inputProblem(input: InputRequest, content: Record<string, unknown>): string | undefined {
  return firstSchemaProblem(requestedSchema(input), content, 'input');
}

/** The answers the call goes on with: the human's content accepted, or every question declined. */
export function inputResponses(input: InputRequest, content: Record<string, unknown> | undefined): Record<string, unknown> {
  const questions = questionsOf(input.requests);
  if (content === undefined) return Object.fromEntries(questions.map((question) => [question.id, { action: 'decline' }]));
  if (questions.length === 1) return { [questions[0]!.id]: { action: 'accept', content } };
  return Object.fromEntries(questions.map((question) => [question.id, { action: 'accept', content: content[question.id] ?? {} }]));
}
