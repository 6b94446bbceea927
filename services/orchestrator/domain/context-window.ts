/**
 * Context windows (input tokens) of the models people configure, used when
 * `chat.max_tokens` is 0. Matched by prefix of the model name as configured, most specific
 * first; a model not in the table gets DEFAULT_CONTEXT_WINDOW — set `chat.max_tokens` for it.
 */
const CONTEXT_WINDOWS: readonly [RegExp, number][] = [
  [/^(google:)?gemini-1\.5-pro/, 2_097_152],
  [/^(google:)?gemini-(1\.5|2\.0|2\.5|3)/, 1_048_576],
  [/^(anthropic:)?claude-/, 200_000],
  [/^openai[-:](gpt-4\.1|gpt-5)/, 1_047_576],
  [/^openai[-:](o1|o3|o4)/, 200_000],
  [/^openai[-:]gpt-4o/, 128_000],
  [/^openai[-:]gpt-4-turbo/, 128_000],
  [/^openai[-:]gpt-4/, 8_192],
  [/^openai[-:]gpt-3\.5/, 16_385],
  [/^mistral[-:](mistral-)?(large|medium|small)/, 128_000],
  [/^mistral[-:]/, 32_000],
  [/^ollama[-:]/, 8_192],
  [/^openrouter[-:]/, 128_000],
];

export const DEFAULT_CONTEXT_WINDOW = 32_768;

export function contextWindowOf(model: string): number {
  return CONTEXT_WINDOWS.find(([pattern]) => pattern.test(model))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}
