import { type ModelRequest, resourceAgentScript } from './scripted-model.js';

/**
 * A three-node sequential tree — an analyzer, an executor with the resource tools, a reporter —
 * and the scripted model that answers it: each prompt starts with "You are the <node>.".
 */
export const pipelineTree = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'analyzer', type: 'llm', output_key: 'analysis', prompt: 'You are the analyzer. Analyze: {user_message}' },
    { name: 'executor', type: 'llm', output_key: 'result', prompt: 'You are the executor. Execute based on: {analysis}' },
    { name: 'reporter', type: 'llm', prompt: 'You are the reporter. Report on: {result}' },
  ],
};

/** The node a request is for. */
const nodeOf = (request: ModelRequest) => /You are the ([\w-]+)\./.exec(request.system)?.[1];

/** The analyzer and the reporter answer text; the executor is the resource agent (tool calls, approvals). */
export function pipelineScript(request: ModelRequest) {
  switch (nodeOf(request)) {
    case 'analyzer':
      return { text: `ANALYSIS(${request.lastUserText})` };
    case 'reporter':
      return { text: 'REPORT' };
    default:
      return resourceAgentScript(request);
  }
}
