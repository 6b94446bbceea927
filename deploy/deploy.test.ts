/**
 * No Docker engine runs where this project is built, so the deployment files are checked
 * statically: every container runs a real `asg serve` service with a valid config, every
 * address a service dials is a compose service listening on that port, and everything the
 * Dockerfile copies exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVICE_NAMES } from '../cli/serve.js';
import { loadConfig } from '../services/common/config/load.js';

const here = import.meta.dirname;
const root = join(here, '..');
const compose = parse(readFileSync(join(here, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, { command: string[]; volumes?: string[] }> };
const config = loadConfig(join(here, 'agent.compose.yaml'));

describe('deploy/compose.yaml', () => {
  it('runs each service of the mesh exactly once, with `asg serve`', () => {
    const served = Object.values(compose.services).map((service) => {
      expect(service.command[0]).toBe('serve');
      return service.command[1];
    });
    expect([...served].sort()).toEqual([...SERVICE_NAMES].sort());
    for (const [name, service] of Object.entries(compose.services)) expect(service.command[1]).toBe(name);
  });

  it('mounts a valid config at the path each service reads', () => {
    for (const service of Object.values(compose.services)) {
      const configPath = service.command[service.command.indexOf('--config') + 1];
      expect(service.volumes ?? []).toContain(`./agent.compose.yaml:${configPath}:ro`);
    }
    expect(config.data_dir).toBe('/data');
  });

  it('dials every service at its compose name and the port it listens on', () => {
    for (const address of Object.values(config.services)) {
      const [host] = address.split(':');
      expect(Object.keys(compose.services)).toContain(host);
    }
    expect(config.services.conversation_store).toBe('conversation-store:7101');
    expect(config.services.orchestrator).toBe('orchestrator:7104');
  });

  it('keeps the store and the resources database on volumes', () => {
    expect(compose.services['conversation-store']!.volumes).toContain('store-data:/data');
    expect(compose.services['tool-broker']!.volumes).toContain('tool-data:/data');
  });
});

describe('deploy/Dockerfile', () => {
  it('copies only paths that exist and starts bin/asg', () => {
    const dockerfile = readFileSync(join(here, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/));
    expect(copied.length).toBeGreaterThan(5);
    for (const path of copied) expect(existsSync(join(root, path)), path).toBe(true);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "bin/asg"]');
  });
});
