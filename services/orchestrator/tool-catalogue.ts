import type { Tool, ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import type { OrchestratorClients } from './clients.js';

/**
 * The tool list, fetched from the broker and kept for a short while so a turn does not pay
 * a round trip for it at every step. Staleness is harmless for safety: the broker itself
 * refuses a destructive call that comes without an approval.
 */
export class ToolCatalogue {
  private cached: { tools: Map<string, Tool>; servers: ToolServer[]; fetchedAt: number } | undefined;

  constructor(
    private readonly clients: Pick<OrchestratorClients, 'tools'>,
    private readonly maxAgeMs = 2000,
  ) {}

  async current(): Promise<Map<string, Tool>> {
    return (await this.fetch()).tools;
  }

  /** The MCP servers behind the tools and whether each is available, as fresh as the tools. */
  async servers(): Promise<ToolServer[]> {
    return (await this.fetch()).servers;
  }

  private async fetch(): Promise<{ tools: Map<string, Tool>; servers: ToolServer[] }> {
    if (this.cached && Date.now() - this.cached.fetchedAt < this.maxAgeMs) return this.cached;
    const { tools, servers } = await this.clients.tools.listTools({});
    this.cached = { tools: new Map(tools.map((tool) => [tool.name, tool])), servers, fetchedAt: Date.now() };
    return this.cached;
  }

  async list(): Promise<Tool[]> {
    return [...(await this.current()).values()];
  }
}

/** A catalogue with more tools (a node's or simple mode's A2A agents); the base when there are none. */
export function catalogueWith(base: ReadonlyMap<string, Tool>, extra: readonly Tool[]): ReadonlyMap<string, Tool> {
  if (extra.length === 0) return base;
  const merged = new Map(base);
  for (const tool of extra) merged.set(tool.name, tool);
  return merged;
}
