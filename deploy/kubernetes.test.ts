/**
 * No cluster runs where this project is built, so the Kubernetes manifests are checked offline:
 * each layout is rendered with `kubectl kustomize` (found or installed by the
 * test set-up, test/support/requirements.ts), every object is validated against the Kubernetes
 * schemas (kubernetes-models: the model class of its apiVersion and kind), and what the schemas
 * cannot say is asserted here: probes, resources and a locked-down pod for every Deployment, an
 * autoscaler for every stateless service, Services that select real pods, network policies that
 * open exactly the calls the code makes, references that resolve, and no real secret in git; a
 * metrics port on every service that the monitoring namespace alone may scrape (and the optional
 * ServiceMonitor component); database and NATS URLs only in the pods whose code reads them; the
 * migrations Job of the production layout; the demo MCP server run once for every tool broker;
 * an Ingress with a class and TLS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SERVICE_NAMES } from '../cli/serve.js';
import { parseConfig } from '../services/common/config/load.js';
import { checkAuthConfig } from '../gateway/auth/preflight.js';
import type { AgentConfig } from '../services/common/config/schema.js';
import { LIVENESS_SERVICE } from '../services/common/grpc/health.js';

const here = import.meta.dirname;
const root = join(here, '..');
const tree = join(here, 'kubernetes');
const kubectl = process.env.KUBECTL_PATH || 'kubectl';

type Service = (typeof SERVICE_NAMES)[number];
/** The demo MCP server of agent.yaml, run once for every tool-broker replica. */
const DEMO_MCP = 'mcp-resources';
/** Every Deployment of a layout: the mesh's services and the demo MCP server. */
type Workload = Service | typeof DEMO_MCP;
const WORKLOADS: Workload[] = [...SERVICE_NAMES, DEMO_MCP];
type Labels = Record<string, string>;

/** The parts of the rendered objects these checks read; the schemas check the rest. */
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  spec?: any;
  data?: Record<string, string>;
}

interface Container {
  name: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string } };
  }[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  readinessProbe?: any;
  livenessProbe?: any;
  startupProbe?: any;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    capabilities?: { drop?: string[] };
  };
}

const NAMESPACE = 'agent-stop-and-go';
/** The namespace Prometheus scrapes from, by the label Kubernetes sets on every namespace. */
const MONITORING_LABEL = 'kubernetes.io/metadata.name';
const MONITORING_NAMESPACE = 'monitoring';
/** The variables that carry the database's and NATS' URLs, with their credentials. */
const URL_VARIABLES = ['ASG_DATABASE_URL', 'ASG_EVENTS_URL'] as const;
/** The Secret that holds real credentials: created outside git, never rendered by an overlay. */
const EXTERNAL_SECRET = 'asg-secrets';
const EXAMPLE_SECRET_KEYS = readFileSync(join(tree, 'base', 'secrets.example.env'), 'utf8')
  .split('\n')
  .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
  .map((line) => line.slice(0, line.indexOf('=')));

/** The services that call others, and whom, as the code says: each `peers.<name>` a caller dials. */
function callGraph(): Map<Service, Set<Service>> {
  const byPeer: Record<string, Service> = {
    conversationStore: 'conversation-store',
    llmGateway: 'llm-gateway',
    toolBroker: 'tool-broker',
    orchestrator: 'orchestrator',
    a2aBridge: 'a2a-bridge',
  };
  const callers: [Service, string][] = [
    ['gateway', 'gateway/app/backends.ts'],
    ['orchestrator', 'services/orchestrator/clients.ts'],
  ];
  const graph = new Map<Service, Set<Service>>();
  for (const [caller, file] of callers) {
    const source = readFileSync(join(root, file), 'utf8');
    graph.set(caller, new Set([...source.matchAll(/\bpeers\.(\w+)/g)].map((match) => byPeer[match[1]!]!)));
  }
  return graph;
}

/** The non-test TypeScript files under a directory of the repository. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => join(root, dir, file));
}

/** Whether a service's own code names an environment variable (as a string literal): the variables a service reads are named in its code. */
function readsVariable(service: Service, name: string): boolean {
  const dir = service === 'gateway' ? 'gateway' : join('services', service);
  return sourceFiles(dir).some((file) => new RegExp(`['"\`]${name}['"\`]`).test(readFileSync(file, 'utf8')));
}

function render(dir: string): K8sObject[] {
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);
}

/** The kubernetes-models class of an object's apiVersion and kind ("apps/v1" → kubernetes-models/apps/v1). */
async function validate(object: K8sObject): Promise<void> {
  const models = (await import(`kubernetes-models/${object.apiVersion}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = models[object.kind];
  if (Model === undefined) throw new Error(`no Kubernetes model for ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

function only<T>(items: T[], what: string): T {
  expect(items, what).toHaveLength(1);
  return items[0]!;
}

function matches(selector: Labels, labels: Labels | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

class Layout {
  constructor(readonly objects: K8sObject[]) {}

  all(kind: string): K8sObject[] {
    return this.objects.filter((object) => object.kind === kind);
  }

  find(kind: string, name: string): K8sObject | undefined {
    return this.objects.find((object) => object.kind === kind && object.metadata.name === name);
  }

  deployment(service: Workload): K8sObject {
    return only(
      this.all('Deployment').filter((object) => object.metadata.name === service),
      `Deployment ${service}`,
    );
  }

  container(service: Workload): Container {
    return only(this.deployment(service).spec.template.spec.containers as Container[], `containers of ${service}`);
  }

  /** The agent config every service reads, parsed from the rendered ConfigMap as the services parse it. */
  config(): AgentConfig {
    const configMap = only(this.all('ConfigMap'), 'ConfigMap');
    return parseConfig(parseAllDocuments(configMap.data!['agent.yaml']!)[0]!.toJS(), 'ConfigMap agent.yaml');
  }

  /** The workloads whose pods a NetworkPolicy's peer list admits; 'outside' when it admits sources beyond the namespace's pods. */
  peers(from: any[] | undefined): Set<Workload | 'outside'> {
    if (from === undefined || from.length === 0) return new Set([...WORKLOADS, 'outside']);
    const admitted = new Set<Workload | 'outside'>();
    for (const peer of from) {
      if (peer.ipBlock !== undefined || peer.namespaceSelector !== undefined) admitted.add('outside');
      if (peer.podSelector !== undefined && peer.namespaceSelector === undefined) {
        for (const service of WORKLOADS) {
          if (matches(peer.podSelector.matchLabels ?? {}, this.deployment(service).spec.template.metadata.labels)) admitted.add(service);
        }
      }
    }
    return admitted;
  }

  policiesOf(service: Workload): any[] {
    const labels = this.deployment(service).spec.template.metadata.labels;
    return this.all('NetworkPolicy').filter((policy) => matches(policy.spec.podSelector.matchLabels ?? {}, labels));
  }

  /** Whether the network policies let `from` open a connection to `to`'s own port (gRPC, or HTTP): egress on one end, ingress on the other. */
  allows(from: Workload, to: Workload): boolean {
    const port = this.container(to).ports![0]!;
    const onPort = (rule: any) =>
      rule.ports === undefined || rule.ports.some((p: any) => p.port === port.name || p.port === port.containerPort);
    const egress = this.policiesOf(from).some((policy) =>
      (policy.spec.egress ?? []).some((rule: any) => rule.to !== undefined && onPort(rule) && this.peers(rule.to).has(to)),
    );
    const ingress = this.policiesOf(to).some((policy) =>
      (policy.spec.ingress ?? []).some((rule: any) => onPort(rule) && this.peers(rule.from).has(from)),
    );
    return egress && ingress;
  }
}

const STATELESS_EVERYWHERE: Service[] = ['gateway', 'orchestrator', 'llm-gateway', 'tool-broker', 'a2a-bridge'];

const LAYOUTS = {
  production: { dir: join(tree, 'overlays', 'production'), stateless: [...STATELESS_EVERYWHERE, 'conversation-store'] as Service[] },
  'single-node': { dir: join(tree, 'overlays', 'single-node'), stateless: STATELESS_EVERYWHERE },
};

const rendered = new Map<string, Layout>();
beforeAll(() => {
  for (const [name, { dir }] of Object.entries(LAYOUTS)) rendered.set(name, new Layout(render(dir)));
  rendered.set('base', new Layout(render(join(tree, 'base'))));
});

describe('deploy/kubernetes', () => {
  it('renders the production overlay from the top of the tree', () => {
    expect(render(tree)).toEqual(rendered.get('production')!.objects);
  });

  it.each(['base', 'production', 'single-node'])(
    '%s: every object is valid against the Kubernetes schemas, in one namespace',
    async (name) => {
      const layout = rendered.get(name)!;
      expect(layout.objects.length).toBeGreaterThan(20);
      for (const object of layout.objects) {
        await expect(validate(object), `${object.kind} ${object.metadata.name}`).resolves.toBeUndefined();
        if (object.kind === 'Namespace') expect(object.metadata.name).toBe(NAMESPACE);
        else expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(NAMESPACE);
      }
      expect(layout.find('Namespace', NAMESPACE)!.metadata.labels!['pod-security.kubernetes.io/enforce']).toBe('restricted');
    },
  );

  it('base: the only Secret it renders holds no credential, only the keys the example file names', () => {
    const secret = only(rendered.get('base')!.all('Secret'), 'Secret');
    expect(secret.metadata.name).toBe(EXTERNAL_SECRET);
    const values = Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')] as const);
    expect(values.map(([key]) => key).sort()).toEqual([...EXAMPLE_SECRET_KEYS].sort());
    for (const [key, value] of values) {
      expect(value, key).toBe('');
      expect(value, key).not.toMatch(/sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{20,}|:\/\/[^:/]+:[^@]+@/);
    }
  });

  describe.each(Object.entries(LAYOUTS))('%s overlay', (name, { stateless }) => {
    const layout = () => rendered.get(name)!;

    it('runs each service of the mesh as one Deployment with `asg serve` and the config from the ConfigMap, beside the demo MCP server', () => {
      expect(
        layout()
          .all('Deployment')
          .map((object) => object.metadata.name)
          .sort(),
      ).toEqual([...WORKLOADS].sort());
      const configMap = only(layout().all('ConfigMap'), 'ConfigMap');
      for (const service of SERVICE_NAMES) {
        const container = layout().container(service);
        expect(container.args).toEqual(['serve', service, '--config', '/config/agent.yaml']);
        expect(container.volumeMounts).toContainEqual({ name: 'config', mountPath: '/config', readOnly: true });
        const volumes = layout().deployment(service).spec.template.spec.volumes as any[];
        expect(volumes.find((volume) => volume.name === 'config').configMap.name).toBe(configMap.metadata.name);
        // Its own port first (what the others dial), then the metrics port.
        expect(container.ports!.map((port) => port.name)).toEqual([service === 'gateway' ? 'http' : 'grpc', 'metrics']);
      }
      expect(layout().config().data_dir).toBe('/data');
    });

    it('runs the demo MCP server once, over HTTP, on one claim: every tool-broker replica sees the same resources', () => {
      const config = layout().config();
      // No stdio server: one would run inside each tool-broker pod, with its own files.
      expect(config.mcp_servers.filter((server) => server.command !== undefined)).toEqual([]);
      const server = only(config.mcp_servers, 'MCP servers');
      const url = new URL(server.url!);
      expect(url.hostname).toBe(DEMO_MCP);
      const object = layout().find('Service', DEMO_MCP)!;
      const port = only(object.spec.ports as any[], `ports of Service ${DEMO_MCP}`);
      expect(port.port).toBe(Number(url.port));
      const container = layout().container(DEMO_MCP);
      expect(container.ports).toEqual([{ name: port.targetPort, containerPort: Number(url.port) }]);
      const args = container.args!;
      expect(args.slice(0, 3)).toEqual(['mcp-resources', '--http', url.port]);
      expect(args[args.indexOf('--host') + 1]).toBe('0.0.0.0');
      const database = args[args.indexOf('--db') + 1]!;
      // SQLite on a ReadWriteOnce claim: one replica, the old pod gone before the new one opens the file.
      const deployment = layout().deployment(DEMO_MCP);
      expect(deployment.spec.replicas).toBe(1);
      expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
      expect(layout().find('HorizontalPodAutoscaler', DEMO_MCP)).toBeUndefined();
      const mount = container.volumeMounts!.find((volume) => database.startsWith(`${volume.mountPath}/`))!;
      const volume = (deployment.spec.template.spec.volumes as any[]).find((candidate) => candidate.name === mount.name);
      const claim = layout().find('PersistentVolumeClaim', volume.persistentVolumeClaim.claimName)!;
      expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
      // The tool broker keeps nothing of its own.
      expect(
        layout()
          .container('tool-broker')
          .volumeMounts!.map((volume) => volume.mountPath)
          .sort(),
      ).toEqual(['/config', '/tmp']);
      // Only the tool broker reaches it.
      for (const from of SERVICE_NAMES) expect(layout().allows(from, DEMO_MCP), `${from} → ${DEMO_MCP}`).toBe(from === 'tool-broker');
    });

    it('probes every container: gRPC health on the gRPC services, /ready and /health on the gateway', () => {
      for (const service of SERVICE_NAMES) {
        const container = layout().container(service);
        expect(container.readinessProbe, service).toBeDefined();
        expect(container.livenessProbe, service).toBeDefined();
        const port = container.ports![0]!;
        if (service === 'gateway') {
          expect(port.name).toBe('http');
          expect(port.containerPort).toBe(layout().config().port);
          expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
          expect(container.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
        } else {
          expect(port.name).toBe('grpc');
          // Ready is the whole server's status; alive only says the process answers (a store waiting for its database is not restarted).
          expect(container.readinessProbe.grpc).toEqual({ port: port.containerPort });
          for (const probe of [container.livenessProbe, container.startupProbe])
            expect(probe.grpc).toEqual({ port: port.containerPort, service: LIVENESS_SERVICE });
        }
      }
    });

    it('gives every container resource requests and limits, and a locked-down non-root pod', () => {
      for (const service of WORKLOADS) {
        const pod = layout().deployment(service).spec.template.spec;
        const container = layout().container(service);
        for (const bound of ['requests', 'limits'] as const) {
          expect(Object.keys(container.resources?.[bound] ?? {}).sort(), `${service} ${bound}`).toEqual(['cpu', 'memory']);
        }
        expect(pod.securityContext.runAsNonRoot || container.securityContext?.runAsNonRoot, service).toBe(true);
        expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(pod.automountServiceAccountToken).toBe(false);
        // The root filesystem is read-only: temporary files go to an emptyDir.
        expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        expect(pod.volumes.find((volume: any) => volume.name === 'tmp').emptyDir).toBeDefined();
        expect(pod.topologySpreadConstraints.map((constraint: any) => constraint.labelSelector.matchLabels)).toEqual([
          pod.topologySpreadConstraints[0].labelSelector.matchLabels,
          pod.topologySpreadConstraints[0].labelSelector.matchLabels,
        ]);
        expect(
          matches(pod.topologySpreadConstraints[0].labelSelector.matchLabels, layout().deployment(service).spec.template.metadata.labels),
        ).toBe(true);
      }
    });

    it('drains before it stops: a preStop pause, then shutdown_grace, all within the termination grace period', () => {
      const graceMs = layout().config().shutdown_grace;
      for (const service of WORKLOADS) {
        const pod = layout().deployment(service).spec.template.spec;
        const command = layout().container(service).lifecycle?.preStop?.exec?.command;
        expect(command?.[0], service).toBe('sleep');
        const pauseMs = Number(command![1]) * 1000;
        expect(pauseMs).toBeGreaterThan(0);
        expect(pod.terminationGracePeriodSeconds * 1000, service).toBeGreaterThan(pauseMs + graceMs);
      }
    });

    it('autoscales every stateless service on CPU, and no replica count is below the autoscaler’s floor', () => {
      const autoscaled = layout().all('HorizontalPodAutoscaler');
      expect(autoscaled.map((hpa) => hpa.spec.scaleTargetRef.name).sort()).toEqual([...stateless].sort());
      for (const hpa of autoscaled) {
        expect(hpa.apiVersion).toBe('autoscaling/v2');
        const target = hpa.spec.scaleTargetRef;
        expect(target.kind).toBe('Deployment');
        const deployment = layout().deployment(target.name);
        expect(hpa.spec.metrics).toContainEqual({
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } },
        });
        expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
        expect(deployment.spec.replicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
        if (name === 'production') expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      }
    });

    it('gives every Deployment a PodDisruptionBudget over its pods', () => {
      for (const service of WORKLOADS) {
        const labels = layout().deployment(service).spec.template.metadata.labels;
        const budgets = layout()
          .all('PodDisruptionBudget')
          .filter((pdb) => matches(pdb.spec.selector.matchLabels, labels));
        expect(budgets, service).toHaveLength(1);
      }
    });

    it('has a Service per service that selects its pods, on the ports the container names (grpc, or http for the gateway; and metrics)', () => {
      for (const service of SERVICE_NAMES) {
        const object = layout().find('Service', service)!;
        expect(object, service).toBeDefined();
        const selected = layout()
          .all('Deployment')
          .filter((deployment) => matches(object.spec.selector, deployment.spec.template.metadata.labels));
        expect(
          selected.map((deployment) => deployment.metadata.name),
          service,
        ).toEqual([service]);
        const ports = object.spec.ports as any[];
        expect(ports.map((port) => port.name)).toEqual([service === 'gateway' ? 'http' : 'grpc', 'metrics']);
        for (const port of ports)
          expect(
            layout()
              .container(service)
              .ports!.map((p) => p.name),
          ).toContain(port.targetPort);
      }
      // Every Service selects pods some Deployment makes.
      for (const object of layout().all('Service')) {
        expect(
          layout()
            .all('Deployment')
            .some((deployment) => matches(object.spec.selector, deployment.spec.template.metadata.labels)),
          object.metadata.name,
        ).toBe(true);
      }
    });

    it('dials each service at its headless Service name and port, through the dns resolver (round robin over its pods)', () => {
      const config = layout().config();
      for (const address of Object.values(config.services)) {
        expect(address).toMatch(/^dns:\/\/\//);
        const [host, port] = address.slice('dns:///'.length).split(':');
        const object = layout().find('Service', host as Service);
        expect(object, address).toBeDefined();
        expect(object!.spec.ports[0].port).toBe(Number(port));
        expect(layout().container(host as Service).ports![0]!.containerPort).toBe(Number(port));
      }
    });

    it('lets only the gateway be reached from outside, through its Ingress (with a class and TLS), and the monitoring namespace reach the metrics ports alone', () => {
      const denyAll = layout()
        .all('NetworkPolicy')
        .find((policy) => Object.keys(policy.spec.podSelector).length === 0 && policy.spec.ingress === undefined);
      expect(denyAll?.spec.policyTypes).toEqual(expect.arrayContaining(['Ingress', 'Egress']));
      for (const policy of layout().all('NetworkPolicy')) {
        for (const rule of policy.spec.ingress ?? []) {
          if (!layout().peers(rule.from).has('outside')) continue;
          const ports = rule.ports.map((p: any) => p.port);
          if (ports.includes('metrics')) {
            // The scraper's rule: from the monitoring namespace only, to the metrics port only.
            expect(ports, policy.metadata.name).toEqual(['metrics']);
            expect(rule.from, policy.metadata.name).toEqual([
              { namespaceSelector: { matchLabels: { [MONITORING_LABEL]: MONITORING_NAMESPACE } } },
            ]);
            continue;
          }
          // Any other rule open to the outside applies to the gateway's pods and nothing else.
          const selected = WORKLOADS.filter((service) => layout().policiesOf(service).includes(policy));
          expect(selected, policy.metadata.name).toEqual(['gateway']);
          expect(ports).toEqual(['http']);
        }
      }
      const ingress = only(layout().all('Ingress'), 'Ingress');
      const backends = ingress.spec.rules.flatMap((rule: any) => rule.http.paths.map((path: any) => path.backend.service));
      expect(backends).toEqual([{ name: 'gateway', port: { name: 'http' } }]);
      expect(ingress.spec.ingressClassName).toEqual(expect.any(String));
      // Every host it serves is covered by a TLS entry with a certificate Secret.
      const hosts = ingress.spec.rules.map((rule: any) => rule.host);
      expect(hosts.length).toBeGreaterThan(0);
      for (const host of hosts) {
        expect(ingress.spec.tls.find((tls: any) => tls.hosts.includes(host))?.secretName, host).toEqual(expect.any(String));
      }
      expect(
        layout()
          .all('Service')
          .every((service) => (service.spec.type ?? 'ClusterIP') === 'ClusterIP'),
      ).toBe(true);
    });

    it('declares the metrics port on every service’s container and Service, annotates the pods for scraping, and admits the monitoring namespace to it', () => {
      const port = layout().config().metrics.port;
      expect(port).toBe(9464);
      const scrape = layout().find('NetworkPolicy', 'metrics-scrape')!;
      for (const service of SERVICE_NAMES) {
        expect(layout().container(service).ports).toContainEqual({ name: 'metrics', containerPort: port });
        expect(layout().find('Service', service)!.spec.ports).toContainEqual({
          name: 'metrics',
          port,
          targetPort: 'metrics',
          appProtocol: 'http',
        });
        expect(layout().deployment(service).spec.template.metadata.annotations, service).toEqual({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(port),
          'prometheus.io/path': '/metrics',
        });
        // The scrape policy applies to the pod, on the metrics port, from the monitoring namespace.
        expect(layout().policiesOf(service), service).toContain(scrape);
        expect(scrape.spec.ingress).toEqual([
          {
            from: [{ namespaceSelector: { matchLabels: { [MONITORING_LABEL]: MONITORING_NAMESPACE } } }],
            ports: [{ protocol: 'TCP', port: 'metrics' }],
          },
        ]);
      }
      // The gateway listens on every interface, so its metrics port does too (cli/serve.ts: the gateway's on its host).
      expect(layout().config().host).toBe('0.0.0.0');
    });

    it('opens exactly the calls the code makes between services', () => {
      const graph = callGraph();
      expect(graph.get('gateway')).toEqual(new Set(['orchestrator', 'conversation-store']));
      for (const from of SERVICE_NAMES) {
        for (const to of SERVICE_NAMES) {
          if (from === to) continue;
          expect(layout().allows(from, to), `${from} → ${to}`).toBe(graph.get(from)?.has(to) ?? false);
        }
      }
    });

    it('gives the database and NATS URLs to the services whose code reads them, and to no other', () => {
      for (const service of SERVICE_NAMES) {
        const env = new Set((layout().container(service).env ?? []).map((variable) => variable.name));
        for (const name of URL_VARIABLES) expect(env.has(name), `${service} ${name}`).toBe(readsVariable(service, name));
        for (const source of layout().container(service).envFrom ?? [])
          expect(source.secretRef, `${service} takes the whole Secret`).toBeUndefined();
      }
      // What the code says today: the store alone reads them; the others go through its gRPC API.
      expect(SERVICE_NAMES.filter((service) => URL_VARIABLES.some((name) => readsVariable(service, name)))).toEqual(['conversation-store']);
      expect(layout().container(DEMO_MCP).env ?? []).toEqual([]);
    });

    it('lets every pod resolve names, and only the services given their URLs reach PostgreSQL and NATS', () => {
      const egressPorts = (service: Service) =>
        new Set(
          layout()
            .policiesOf(service)
            .flatMap((policy) =>
              (policy.spec.egress ?? [])
                .filter((rule: any) => rule.to === undefined)
                .flatMap((rule: any) => rule.ports.map((p: any) => p.port)),
            ),
        );
      for (const service of SERVICE_NAMES) {
        const dns = layout()
          .policiesOf(service)
          .flatMap((policy) => policy.spec.egress ?? [])
          .find((rule: any) => rule.to?.some((peer: any) => peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns'));
        expect(dns?.ports, service).toEqual(
          expect.arrayContaining([
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ]),
        );
        const env = new Set((layout().container(service).env ?? []).map((variable) => variable.name));
        expect(egressPorts(service).has(5432), `${service} → PostgreSQL`).toBe(env.has('ASG_DATABASE_URL'));
        expect(egressPorts(service).has(4222), `${service} → NATS`).toBe(env.has('ASG_EVENTS_URL'));
      }
      expect(egressPorts('llm-gateway').has(443)).toBe(true);
    });

    it('resolves every ConfigMap and Secret reference; the credentials come from the external Secret alone', () => {
      expect(layout().all('Secret')).toEqual([]);
      for (const service of WORKLOADS) {
        const container = layout().container(service);
        for (const variable of container.env ?? []) {
          const secret = variable.valueFrom?.secretKeyRef;
          if (secret !== undefined) {
            expect(secret.name, `${service} ${variable.name}`).toBe(EXTERNAL_SECRET);
            expect(EXAMPLE_SECRET_KEYS, `${service} ${variable.name}`).toContain(secret.key);
          }
          const configMapRef = variable.valueFrom?.configMapKeyRef;
          if (configMapRef !== undefined) expect(layout().find('ConfigMap', configMapRef.name)?.data?.[configMapRef.key]).toBeDefined();
        }
        for (const source of container.envFrom ?? []) {
          if (source.secretRef) expect(source.secretRef.name).toBe(EXTERNAL_SECRET);
          if (source.configMapRef) expect(layout().find('ConfigMap', source.configMapRef.name)).toBeDefined();
        }
        for (const volume of layout().deployment(service).spec.template.spec.volumes as any[]) {
          if (volume.configMap) expect(layout().find('ConfigMap', volume.configMap.name), `${service} volume ${volume.name}`).toBeDefined();
          if (volume.secret) expect(volume.secret.secretName).toBe(EXTERNAL_SECRET);
          if (volume.persistentVolumeClaim)
            expect(
              layout().find('PersistentVolumeClaim', volume.persistentVolumeClaim.claimName),
              `${service} volume ${volume.name}`,
            ).toBeDefined();
        }
      }
      // The model keys go to the llm-gateway only.
      for (const service of SERVICE_NAMES) {
        const keys = (layout().container(service).env ?? []).filter((variable) => variable.name.endsWith('_API_KEY'));
        expect(keys.length > 0, service).toBe(service === 'llm-gateway');
      }
    });

    it('authenticates at the gateway, whose admin token is a required key of the external Secret', () => {
      const config = layout().config();
      expect(config.host).toBe('0.0.0.0');
      expect(() => checkAuthConfig(config, {})).toThrow(/ASG_ADMIN_TOKEN is not set/);
      expect(() => checkAuthConfig(config, { ASG_ADMIN_TOKEN: 'x'.repeat(32) })).not.toThrow();
      const token = layout()
        .container('gateway')
        .env!.find((variable) => variable.name === 'ASG_ADMIN_TOKEN');
      expect(token?.valueFrom?.secretKeyRef).toEqual({ name: EXTERNAL_SECRET, key: 'ASG_ADMIN_TOKEN' });
      for (const service of SERVICE_NAMES) {
        if (service !== 'gateway')
          expect(
            layout()
              .container(service)
              .env?.some((variable) => variable.name === 'ASG_ADMIN_TOKEN'),
            service,
          ).toBeFalsy();
      }
    });

    it('sets the image through kustomize images:', () => {
      const images = new Set(SERVICE_NAMES.map((service) => (layout().container(service) as Container & { image: string }).image));
      expect([...images]).toEqual(['registry.example.com/agent-stop-and-go:0.1.0']);
    });
  });

  describe('production overlay', () => {
    const layout = () => rendered.get('production')!;

    it('runs at least two replicas of everything, the store rolling like the rest', () => {
      for (const service of SERVICE_NAMES) expect(layout().deployment(service).spec.replicas, service).toBeGreaterThanOrEqual(2);
      expect(layout().deployment('conversation-store').spec.strategy.type).toBe('RollingUpdate');
      for (const service of SERVICE_NAMES) {
        const strategy = layout().deployment(service).spec.strategy;
        expect(strategy.rollingUpdate.maxUnavailable, service).toBe(0);
      }
    });

    it('requires PostgreSQL and NATS by URL in the store, rather than fall back to SQLite', () => {
      const required = (name: string) =>
        layout()
          .container('conversation-store')
          .env!.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef?.optional;
      expect(required('ASG_DATABASE_URL')).toBe(false);
      expect(required('ASG_EVENTS_URL')).toBe(false);
    });

    it('migrates the schema with a Job of its own, as the schema’s owner, that can be applied alone before the rest', () => {
      const job = only(layout().all('Job'), 'Job');
      const pod = job.spec.template.spec;
      const container = only(pod.containers as Container[], 'containers of the Job') as Container & { image: string };
      expect(container.args).toEqual(['migrate']);
      expect(container.image).toBe('registry.example.com/agent-stop-and-go:0.1.0');
      // The owner's URL, under the name `asg migrate` reads; required: without it the Job fails at once.
      expect(container.env).toEqual([
        { name: 'ASG_DATABASE_URL', valueFrom: { secretKeyRef: { name: EXTERNAL_SECRET, key: 'ASG_MIGRATE_DATABASE_URL' } } },
      ]);
      expect(EXAMPLE_SECRET_KEYS).toContain('ASG_MIGRATE_DATABASE_URL');
      // The store's role is another key: the store never holds the owner's password.
      expect(
        layout()
          .container('conversation-store')
          .env!.find((variable) => variable.name === 'ASG_DATABASE_URL')!.valueFrom!.secretKeyRef!.key,
      ).toBe('ASG_DATABASE_URL');
      for (const service of WORKLOADS) {
        expect(JSON.stringify(layout().container(service).env ?? []), service).not.toContain('ASG_MIGRATE_DATABASE_URL');
      }
      // Locked down like the services' pods (the namespace enforces the restricted standard).
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(Object.keys(container.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
      expect(job.spec.backoffLimit).toBeGreaterThan(0);
      expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
      // Applied alone (kubectl apply -k … -l app.kubernetes.io/component=migrations): the Job and
      // its network policy, which needs nothing else of the layout (no ConfigMap, volumes of its own).
      const selected = layout().objects.filter((object) => object.metadata.labels?.['app.kubernetes.io/component'] === 'migrations');
      expect(selected.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual([
        'Job/asg-migrate',
        'NetworkPolicy/asg-migrate',
      ]);
      expect((pod.volumes as any[]).every((volume) => volume.emptyDir !== undefined)).toBe(true);
      // It reaches PostgreSQL (and DNS) and nothing else; nothing reaches it.
      const policies = layout()
        .all('NetworkPolicy')
        .filter((policy) => matches(policy.spec.podSelector.matchLabels ?? {}, job.spec.template.metadata.labels));
      const egress = policies.flatMap((policy) => policy.spec.egress ?? []);
      expect(egress.flatMap((rule: any) => rule.ports.map((p: any) => p.port)).sort()).toEqual([53, 53, 5432].sort());
      expect(
        policies.flatMap((policy) => policy.spec.ingress ?? []).filter((rule: any) => rule.ports?.some((p: any) => p.port !== 'metrics')),
      ).toEqual([]);
    });
  });

  describe('single-node overlay', () => {
    const layout = () => rendered.get('single-node')!;

    it('has no migrations Job: the store on SQLite migrates its own file when it opens', () => {
      expect(layout().all('Job')).toEqual([]);
    });

    it('keeps the store on SQLite in a PersistentVolumeClaim, one replica, replaced with Recreate', () => {
      const store = layout().deployment('conversation-store');
      expect(store.spec.replicas).toBe(1);
      expect(store.spec.strategy).toEqual({ type: 'Recreate' });
      const dataDir = layout().config().data_dir;
      const mount = layout()
        .container('conversation-store')
        .volumeMounts!.find((volume) => volume.mountPath === dataDir)!;
      const volume = (store.spec.template.spec.volumes as any[]).find((candidate) => candidate.name === mount.name);
      expect(volume).toEqual({ name: mount.name, persistentVolumeClaim: { claimName: 'conversation-store-data' } });
      expect(layout().find('PersistentVolumeClaim', 'conversation-store-data')!.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(layout().find('HorizontalPodAutoscaler', 'conversation-store')).toBeUndefined();
      // SQLite needs no URL: the store starts without one.
      const database = layout()
        .container('conversation-store')
        .env!.find((variable) => variable.name === 'ASG_DATABASE_URL');
      expect(database?.valueFrom?.secretKeyRef?.optional).toBe(true);
    });
  });
});

describe('deploy/kubernetes/components/service-monitor', () => {
  it('adds to a layout one ServiceMonitor, in its namespace, over every Service’s metrics port, and nothing else', () => {
    // As an operator adds it: a kustomization of their own with an overlay and the component.
    const dir = mkdtempSync(join(tmpdir(), 'asg-kustomize-'));
    try {
      const path = (to: string) => relative(dir, join(tree, to));
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${path('overlays/production')}\ncomponents:\n  - ${path('components/service-monitor')}\n`,
      );
      const objects = render(dir);
      const production = rendered.get('production')!;
      const monitor = only(
        objects.filter((object) => object.kind === 'ServiceMonitor'),
        'ServiceMonitor',
      );
      expect(objects.filter((object) => object !== monitor)).toEqual(production.objects);
      // The Prometheus Operator's monitoring.coreos.com/v1 (no model in kubernetes-models: checked here).
      expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor.metadata.namespace).toBe(NAMESPACE);
      expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
      expect(monitor.spec.endpoints).toEqual([
        { port: 'metrics', path: '/metrics', interval: expect.stringMatching(/^\d+s$/), scrapeTimeout: expect.stringMatching(/^\d+s$/) },
      ]);
      // It selects every Service of the mesh (each has a port named metrics) by its labels.
      const selected = production.all('Service').filter((service) => matches(monitor.spec.selector.matchLabels, service.metadata.labels));
      for (const service of SERVICE_NAMES)
        expect(
          selected.map((object) => object.metadata.name),
          service,
        ).toContain(service);
      for (const service of selected) {
        const hasMetrics = (service.spec.ports as any[]).some((port) => port.name === 'metrics');
        expect(hasMetrics || service.metadata.name === DEMO_MCP, service.metadata.name).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('docs/deploy.md against the layouts', () => {
  const guide = readFileSync(join(root, 'docs', 'deploy.md'), 'utf8');

  it('renders every layout its kubectl commands name; its migrations selector picks the Job and its policy alone', () => {
    const commands = [...guide.matchAll(/kubectl (?:kustomize|apply -k) (deploy\/kubernetes[^\s`]*)(.*)$/gm)];
    const paths = new Set(commands.map((match) => match[1]!));
    expect([...paths].sort()).toEqual([
      'deploy/kubernetes',
      'deploy/kubernetes/overlays/production',
      'deploy/kubernetes/overlays/single-node',
    ]);
    for (const path of paths) expect(render(join(root, path)).length, path).toBeGreaterThan(20);
    const selectors = new Set(
      commands.flatMap((match) => [...match[2]!.matchAll(/-l (\S+)=(\S+)/g)].map((selector) => `${selector[1]}=${selector[2]}`)),
    );
    expect([...selectors]).toEqual(['app.kubernetes.io/component=migrations']);
    const selected = rendered
      .get('production')!
      .objects.filter((object) => object.metadata.labels?.['app.kubernetes.io/component'] === 'migrations');
    expect(selected.map((object) => object.kind).sort()).toEqual(['Job', 'NetworkPolicy']);
    // The Job it waits for is the one the layout has.
    expect(guide).toContain(`job/${only(rendered.get('production')!.all('Job'), 'Job').metadata.name}`);
    // The component path it tells to add to an overlay exists from there.
    const component = /^ {4}- (\.\.\/\.\.\/components\/\S+)$/m.exec(guide)![1]!;
    expect(readFileSync(join(tree, 'overlays', 'production', component, 'kustomization.yaml'), 'utf8')).toContain('kind: Component');
  });

  it('lists every key of the Secret, with the pods that read it', () => {
    const section = guide.slice(guide.indexOf('## Secrets'), guide.indexOf('## Migrations'));
    const rows = [...section.matchAll(/^\| (`[A-Z_`, ]+) \| ([^|]+) \|/gm)].map((match) => ({
      keys: [...match[1]!.matchAll(/`([A-Z_]+)`/g)].map((key) => key[1]!),
      readers: match[2]!,
    }));
    expect(rows.flatMap((row) => row.keys).sort()).toEqual([...EXAMPLE_SECRET_KEYS].sort());
    const production = rendered.get('production')!;
    const spoken = (service: Workload) => (service === 'conversation-store' ? 'conversation store' : service);
    for (const { keys, readers } of rows) {
      for (const key of keys) {
        const readBy = WORKLOADS.filter((service) =>
          (production.container(service).env ?? []).some((variable) => variable.valueFrom?.secretKeyRef?.key === key),
        );
        const byJob = production.all('Job').some((job) => JSON.stringify(job.spec.template.spec.containers).includes(`"key":"${key}"`));
        expect(readBy.length + (byJob ? 1 : 0), key).toBeGreaterThan(0);
        for (const service of readBy) expect(readers, key).toContain(spoken(service));
        if (byJob) expect(readers, key).toContain('migrations Job');
      }
    }
  });
});
