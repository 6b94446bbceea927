/**
 * The words of a turn that could not go on — the model failed after its retries (a missing or
 * refused key, a provider that kept failing), or the tools could not be listed. The turn ends
 * with this text as the assistant's answer, so that the conversation (and the model, next
 * time) knows what happened; the faces recognise it by these words and show it as an error
 * (`is_error` on the message and the result), never as an ordinary answer.
 */
const MODEL_FAILED = 'The model could not answer';
const TOOLS_FAILED = 'The tools are unavailable right now';

export function modelFailureText(category: string, error: string): string {
  return `${MODEL_FAILED} (${category} error): ${error}`;
}

export function toolsFailureText(error: string): string {
  return `${TOOLS_FAILED}: ${error}`;
}

export function isTurnFailureText(text: string): boolean {
  return text.startsWith(`${MODEL_FAILED} (`) || text.startsWith(`${TOOLS_FAILED}: `);
}
