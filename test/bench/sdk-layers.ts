/**
 * How much CPU of one model call is the AI SDK's `generateText` around the provider's own
 * `doGenerate`: the same Gemini request with a 17-message history and one tool, both
 * against the scripted model in this process, alternating in four rounds; CPU from
 * `process.cpuUsage()` (the scripted model's share is the same in both). What `generateText`
 * adds is prompt standardisation (zod over the messages), conversion, tool preparation and
 * result assembly. `node --import tsx test/bench/sdk-layers.ts`.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { resourceAgentScript, startScriptedModel } from '../support/scripted-model.js';
const model = await startScriptedModel(resourceAgentScript);
const m = createGoogleGenerativeAI({ apiKey: 'bench-key-0123456789', baseURL: model.geminiBaseUrl })('gemini-2.5-flash');
const schema = { type: 'object', properties: { pattern: { type: 'string' } } } as const;
const history = Array.from({ length: 8 }, (_, i) => [
  { role: 'user' as const, content: `question ${i}` },
  { role: 'assistant' as const, content: `answer ${i} `.repeat(20) },
]).flat();
const viaSdk = () =>
  generateText({
    model: m,
    system: 'You manage resources.',
    messages: [...history, { role: 'user', content: 'list resources' }],
    tools: { resources_list: tool({ description: 'List resources', inputSchema: jsonSchema(schema) }) },
    maxRetries: 0,
    stopWhen: stepCountIs(1),
  });
const viaProvider = () =>
  m.doGenerate({
    prompt: [
      { role: 'system', content: 'You manage resources.' },
      ...history.map((h) => ({ role: h.role, content: [{ type: 'text' as const, text: h.content }] })),
      { role: 'user', content: [{ type: 'text', text: 'list resources' }] },
    ],
    tools: [{ type: 'function', name: 'resources_list', description: 'List resources', inputSchema: schema }],
  } as any);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (let i = 0; i < 200; i++) {
  await viaSdk();
  await viaProvider();
}
const N = 1000;
let a = 0,
  b = 0;
for (let r = 0; r < 4; r++) {
  let c = cpu();
  for (let i = 0; i < N / 4; i++) await viaSdk();
  a += cpu() - c;
  c = cpu();
  for (let i = 0; i < N / 4; i++) await viaProvider();
  b += cpu() - c;
}
console.log(
  `CPU per call (this process incl. the scripted model): generateText ${(a / N).toFixed(3)} ms, doGenerate ${(b / N).toFixed(3)} ms, difference ${((a - b) / N).toFixed(3)} ms`,
);
await model.close();
process.exit(0);
