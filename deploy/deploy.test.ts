/**
 * No Docker engine runs where this project is built, so the deployment files are checked
 * statically: every container runs a real `asg serve` service with a valid config, every
 * address a service dials is a compose service listening on that port, and everything the
 * Dockerfile copies exists.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVICE_NAMES } from '../cli/serve.js';
import { loadConfig } from '../services/common/config/load.js';
import { checkAuthConfig, InsecureBindingError } from '../gateway/auth/preflight.js';
import { loadWebConfig } from '../gateway/web/config.js';
import { DEFAULT_PORT as FILESYSTEM_DEFAULT_PORT } from '../services/mcp-filesystem/config.js';

const here = import.meta.dirname;
const root = join(here, '..');
const compose = parse(readFileSync(join(here, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command: string[]; volumes?: string[] }>;
};
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

  it('starts a gateway beyond loopback only with authentication, its token required from the environment', () => {
    expect(config.host).toBe('0.0.0.0');
    // Without the token the gateway would refuse to start: compose must refuse first, saying why.
    expect(() => checkAuthConfig(config, {})).toThrow(/ASG_ADMIN_TOKEN is not set/);
    expect(() => checkAuthConfig({ ...config, auth: undefined }, {})).toThrow(InsecureBindingError);
    expect(() => checkAuthConfig(config, { ASG_ADMIN_TOKEN: 'x'.repeat(32) })).not.toThrow();
    expect(config.auth!.tokens.map((token) => token.roles)).toEqual([['admin']]);
    const gateway = compose.services.gateway as { environment?: Record<string, string> };
    expect(gateway.environment?.ASG_ADMIN_TOKEN).toMatch(/^\$\{ASG_ADMIN_TOKEN:\?.+\}$/);
    for (const [name, service] of Object.entries(compose.services) as [string, { environment?: Record<string, string> }][]) {
      if (name !== 'gateway') expect(service.environment?.ASG_ADMIN_TOKEN, name).toBeUndefined();
    }
  });

  it('checks the health of each gRPC service at the port it listens on (the image checks the gateway)', () => {
    for (const [name, service] of Object.entries(compose.services) as [string, { healthcheck?: { test: string[] } }][]) {
      if (name === 'gateway') {
        expect(service.healthcheck).toBeUndefined();
        continue;
      }
      const address = config.services[name.replace('-', '_') as keyof typeof config.services];
      expect(service.healthcheck?.test, name).toEqual([
        'CMD',
        'node',
        'deploy/healthcheck.mjs',
        address.slice(address.lastIndexOf(':') + 1),
      ]);
    }
  });

  it('keeps the store and the resources database on volumes', () => {
    expect(compose.services['conversation-store']!.volumes).toContain('store-data:/data');
    expect(compose.services['tool-broker']!.volumes).toContain('tool-data:/data');
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(join(here, 'Dockerfile'), 'utf8');
  /** The stage the image is made of: everything after the last FROM. */
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const instruction = (name: string) => [...runtime.matchAll(new RegExp(`^${name} (.+)$`, 'gm'))].map((match) => match[1]!);

  it('copies only paths that exist and starts bin/asg under tini', () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/));
    expect(copied.length).toBeGreaterThan(5);
    for (const path of copied) expect(existsSync(join(root, path)), path).toBe(true);
    // tini, the Debian package, is PID 1: it passes signals on to node and reaps exited children.
    expect(runtime).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(instruction('ENTRYPOINT')).toEqual(['["/usr/bin/tini", "--", "node", "bin/asg"]']);
  });

  it('builds in one stage and runs from another that has no build tools, as a user other than root', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^FROM \S+ AS build$/m);
    expect(runtime).not.toMatch(/\b(g\+\+|make|python3)\b/);
    expect(runtime).toMatch(/^COPY --from=build /m);
    const users = instruction('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  });

  it("keeps the agent's data on a volume that its user may write", () => {
    const user = instruction('USER').at(-1)!;
    expect(instruction('VOLUME')).toContain(config.data_dir);
    // Made and handed over before VOLUME: a new volume starts with the ownership of the image's directory.
    const chown = runtime.search(new RegExp(`chown ${user}:${user} ${config.data_dir}\\b`));
    expect(chown).toBeGreaterThan(0);
    expect(chown).toBeLessThan(runtime.search(/^VOLUME /m));
    expect(runtime.search(/^VOLUME /m)).toBeLessThan(runtime.search(/^USER /m));
  });

  it('exposes every port something in the image listens on', () => {
    const exposed = instruction('EXPOSE')
      .flatMap((ports) => ports.split(/\s+/))
      .map(Number);
    const listening = [
      config.port, // the gateway of `asg up` and `asg serve gateway`
      ...Object.values(config.services).map((address) => Number(address.slice(address.lastIndexOf(':') + 1))), // `asg serve <service>`
      loadWebConfig(join(root, 'config', 'web.yaml')).port, // `asg web`
      FILESYSTEM_DEFAULT_PORT, // `asg mcp-filesystem`
      config.metrics.port, // the metrics port of every service of `asg serve`
    ];
    expect([...exposed].sort()).toEqual([...new Set(listening)].sort());
  });

  it('has a HEALTHCHECK that runs a script the image holds, within its timeout', () => {
    const [healthcheck] = instruction('HEALTHCHECK');
    expect(healthcheck).toMatch(/--timeout=5s .*CMD \["node", "deploy\/healthcheck\.mjs"\]$/);
    expect(runtime).toMatch(/^COPY .*deploy\/healthcheck\.mjs .*\/app\/deploy\/$/m);
  });
});

describe('deploy/.dockerignore', () => {
  it('keeps secrets, installed packages, built output and local data out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    for (const entry of ['.git', 'node_modules', 'dist', 'gen', 'web/dist', '.env', 'data', '*.db'])
      expect(ignored, entry).toContain(entry);
    // Nothing the Dockerfile copies is ignored.
    for (const match of readFileSync(join(here, 'Dockerfile'), 'utf8').matchAll(/^COPY (?!--from)(.+) \S+$/gm))
      for (const path of match[1]!.split(/\s+/)) expect(ignored, path).not.toContain(path);
  });
});

describe('deploy/healthcheck.mjs', () => {
  const script = join(here, 'healthcheck.mjs');
  /** The script's exit code, run as the HEALTHCHECK runs it, with PORT pointing at `port`. */
  const check = (port: number, ...args: string[]) =>
    new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
      child.once('error', reject);
      child.once('exit', resolve);
    });

  it("is healthy while the gateway's /health answers 200, and not once it answers otherwise or nothing listens", async () => {
    let status = 200;
    const server = createServer((req, res) => res.writeHead(req.url === '/health' ? status : 404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await check(port)).toBe(0);
      // A gRPC service's port: only that it accepts connections.
      expect(await check(0, String(port))).toBe(0);
      status = 503;
      expect(await check(port)).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await check(port)).toBe(1);
    expect(await check(0, String(port))).toBe(1);
  });
});

interface ReplicatedService {
  image: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
  stop_grace_period?: string;
}

/** What compose makes of `${VAR:-default}` with none of the variables set. */
function interpolateDefaults(text: string): string {
  return text.replace(/\$\{[A-Z_][A-Z0-9_]*:-([^}]*)\}/g, '$1');
}

describe('deploy/compose.replicated.yaml', () => {
  const replicated = parse(interpolateDefaults(readFileSync(join(here, 'compose.replicated.yaml'), 'utf8')), { merge: true }) as {
    services: Record<string, ReplicatedService>;
    volumes: Record<string, unknown>;
  };
  const mesh = Object.entries(replicated.services).filter(([, service]) => service.command?.[0] === 'serve');
  const postgres = replicated.services.postgres!;
  const nats = replicated.services.nats!;

  it('runs every service of the mesh with `asg serve`, two replicas each, with the config mounted', () => {
    expect(mesh.map(([name]) => name).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const [name, service] of mesh) {
      expect(service.command).toEqual(['serve', name, '--config', '/config/agent.yaml']);
      expect(service.image).toBe('agent-stop-and-go');
      expect(service.deploy?.replicas, name).toBe(2);
      expect(service.volumes).toContain('./agent.compose.yaml:/config/agent.yaml:ro');
    }
  });

  it('runs PostgreSQL 15 and NATS with JetStream, each keeping its data on a volume', () => {
    expect(postgres.image).toMatch(/^postgres:15(\.|$|-)/);
    expect(postgres.volumes).toContain('pg-data:/var/lib/postgresql/data');
    expect(nats.image).toMatch(/^nats:/);
    expect(nats.command).toContain('-js');
    const store = nats.command![nats.command!.indexOf('-sd') + 1];
    expect(nats.volumes).toContain(`nats-data:${store}`);
    for (const volume of ['pg-data', 'nats-data', 'tool-data']) expect(Object.keys(replicated.volumes)).toContain(volume);
  });

  it('gives the store, and no other service, the database and events URLs of those services', () => {
    const databaseUrl = replicated.services['conversation-store']!.environment!.ASG_DATABASE_URL!;
    const eventsUrl = replicated.services['conversation-store']!.environment!.ASG_EVENTS_URL!;
    const database = new URL(databaseUrl);
    expect(database.protocol).toBe('postgres:');
    expect(database.hostname).toBe('postgres');
    expect(database.port).toBe('5432');
    expect(database.username).toBe(postgres.environment!.POSTGRES_USER);
    expect(decodeURIComponent(database.password)).toBe(postgres.environment!.POSTGRES_PASSWORD);
    expect(database.pathname).toBe(`/${postgres.environment!.POSTGRES_DB}`);
    const events = new URL(eventsUrl);
    expect(events.protocol).toBe('nats:');
    expect(events.hostname).toBe('nats');
    expect(replicated.services['conversation-store']!.depends_on?.postgres?.condition).toBe('service_healthy');
    // The store alone reads them (services/conversation-store); the others go through its gRPC API.
    for (const [name, service] of Object.entries(replicated.services)) {
      if (name === 'conversation-store') continue;
      expect(Object.keys(service.environment ?? {}), name).not.toContain('ASG_DATABASE_URL');
      expect(Object.keys(service.environment ?? {}), name).not.toContain('ASG_EVENTS_URL');
    }
    expect(replicated.services.gateway!.environment).toEqual({ ASG_ADMIN_TOKEN: expect.stringMatching(/^\$\{ASG_ADMIN_TOKEN:\?/) });
  });

  it('dials every service at its compose name, starts callers after what they call, and publishes one host port per gateway replica', () => {
    for (const address of Object.values(config.services)) expect(Object.keys(replicated.services)).toContain(address.split(':')[0]);
    for (const service of Object.values(replicated.services)) {
      for (const dependency of Object.keys(service.depends_on ?? {})) expect(Object.keys(replicated.services)).toContain(dependency);
    }
    expect(Object.keys(replicated.services.orchestrator!.depends_on!)).toEqual(
      expect.arrayContaining(['conversation-store', 'llm-gateway', 'tool-broker', 'a2a-bridge']),
    );
    expect(Object.keys(replicated.services.gateway!.depends_on!)).toEqual(expect.arrayContaining(['orchestrator', 'conversation-store']));
    const [range] = replicated.services.gateway!.ports!;
    const [, first, last, target] = /^"?(\d+)-(\d+):(\d+)"?$/.exec(range!)!;
    expect(Number(last) - Number(first) + 1).toBe(replicated.services.gateway!.deploy!.replicas);
    expect(Number(target)).toBe(config.port);
    for (const [name, service] of mesh) if (name !== 'gateway') expect(service.ports, name).toBeUndefined();
  });

  it('checks the health of each gRPC service at the port it listens on', () => {
    for (const [name, service] of mesh as [string, ReplicatedService & { healthcheck?: { test: string[] } }][]) {
      if (name === 'gateway') continue;
      const address = config.services[name.replace('-', '_') as keyof typeof config.services];
      expect(service.healthcheck?.test, name).toEqual([
        'CMD',
        'node',
        'deploy/healthcheck.mjs',
        address.slice(address.lastIndexOf(':') + 1),
      ]);
    }
  });

  it('gives a stopping replica longer than shutdown_grace before it is killed', () => {
    for (const [name, service] of mesh) {
      const seconds = Number(/^(\d+)s$/.exec(service.stop_grace_period ?? '')?.[1]);
      expect(seconds * 1000, name).toBeGreaterThan(config.shutdown_grace);
    }
  });
});
