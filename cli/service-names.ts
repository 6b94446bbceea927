/** The services `asg serve` runs alone; apart from serve.ts so that the usage text needs none of them loaded. */
export const SERVICE_NAMES = ['gateway', 'orchestrator', 'conversation-store', 'llm-gateway', 'tool-broker', 'a2a-bridge'] as const;
