/**
 * No cluster runs where this project is built, so the Kubernetes manifests are checked offline
 * (issue 14, item 6): each layout is rendered with `kubectl kustomize` (found or installed by the
 * test set-up, test/support/requirements.ts), every object is validated against the Kubernetes
 * schemas (kubernetes-models: the model class of its apiVersion and kind), and what the schemas
 * cannot say is asserted here: probes, resources and a locked-down pod for every Deployment, an
 * autoscaler for every stateless service, Services that select real pods, network policies that
 * open exactly the calls the code makes, references that resolve, and no real secret in git.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string } } }[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  readinessProbe?: any;
  livenessProbe?: any;
  startupProbe?: any;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean; capabilities?: { drop?: string[] } };
}

const NAMESPACE = 'agent-stop-and-go';
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

  deployment(service: Service): K8sObject {
    return only(this.all('Deployment').filter((object) => object.metadata.name === service), `Deployment ${service}`);
  }

  container(service: Service): Container {
    return only(this.deployment(service).spec.template.spec.containers as Container[], `containers of ${service}`);
  }

  /** The agent config every service reads, parsed from the rendered ConfigMap as the services parse it. */
  config(): AgentConfig {
    const configMap = only(this.all('ConfigMap'), 'ConfigMap');
    return parseConfig(parseAllDocuments(configMap.data!['agent.yaml']!)[0]!.toJS(), 'ConfigMap agent.yaml');
  }

  /** The services whose pods a NetworkPolicy's peer list admits; 'outside' when it admits sources beyond the namespace's pods. */
  peers(from: any[] | undefined): Set<Service | 'outside'> {
    if (from === undefined || from.length === 0) return new Set([...SERVICE_NAMES, 'outside']);
    const admitted = new Set<Service | 'outside'>();
    for (const peer of from) {
      if (peer.ipBlock !== undefined || peer.namespaceSelector !== undefined) admitted.add('outside');
      if (peer.podSelector !== undefined && peer.namespaceSelector === undefined) {
        for (const service of SERVICE_NAMES) {
          if (matches(peer.podSelector.matchLabels ?? {}, this.deployment(service).spec.template.metadata.labels)) admitted.add(service);
        }
      }
    }
    return admitted;
  }

  policiesOf(service: Service): any[] {
    const labels = this.deployment(service).spec.template.metadata.labels;
    return this.all('NetworkPolicy').filter((policy) => matches(policy.spec.podSelector.matchLabels ?? {}, labels));
  }

  /** Whether the network policies let `from` open a connection to `to`'s gRPC port: egress on one end, ingress on the other. */
  allows(from: Service, to: Service): boolean {
    const port = this.container(to).ports![0]!;
    const onPort = (rule: any) => rule.ports === undefined || rule.ports.some((p: any) => p.port === port.name || p.port === port.containerPort);
    const egress = this.policiesOf(from).some((policy) => (policy.spec.egress ?? []).some((rule: any) => rule.to !== undefined && onPort(rule) && this.peers(rule.to).has(to)));
    const ingress = this.policiesOf(to).some((policy) => (policy.spec.ingress ?? []).some((rule: any) => onPort(rule) && this.peers(rule.from).has(from)));
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

  it.each(['base', 'production', 'single-node'])('%s: every object is valid against the Kubernetes schemas, in one namespace', async (name) => {
    const layout = rendered.get(name)!;
    expect(layout.objects.length).toBeGreaterThan(20);
    for (const object of layout.objects) {
      await expect(validate(object), `${object.kind} ${object.metadata.name}`).resolves.toBeUndefined();
      if (object.kind === 'Namespace') expect(object.metadata.name).toBe(NAMESPACE);
      else expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(NAMESPACE);
    }
    expect(layout.find('Namespace', NAMESPACE)!.metadata.labels!['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

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

    it('runs each service of the mesh as one Deployment with `asg serve` and the config from the ConfigMap', () => {
      expect(layout().all('Deployment').map((object) => object.metadata.name).sort()).toEqual([...SERVICE_NAMES].sort());
      const configMap = only(layout().all('ConfigMap'), 'ConfigMap');
      for (const service of SERVICE_NAMES) {
        const container = layout().container(service);
        expect(container.args).toEqual(['serve', service, '--config', '/config/agent.yaml']);
        expect(container.volumeMounts).toContainEqual({ name: 'config', mountPath: '/config', readOnly: true });
        const volumes = layout().deployment(service).spec.template.spec.volumes as any[];
        expect(volumes.find((volume) => volume.name === 'config').configMap.name).toBe(configMap.metadata.name);
        expect(container.ports).toHaveLength(1);
      }
      expect(layout().config().data_dir).toBe('/data');
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
          for (const probe of [container.livenessProbe, container.startupProbe]) expect(probe.grpc).toEqual({ port: port.containerPort, service: LIVENESS_SERVICE });
        }
      }
    });

    it('gives every container resource requests and limits, and a locked-down non-root pod', () => {
      for (const service of SERVICE_NAMES) {
        const pod = layout().deployment(service).spec.template.spec;
        const container = layout().container(service);
        for (const bound of ['requests', 'limits'] as const) {
          expect(Object.keys(container.resources?.[bound] ?? {}).sort(), `${service} ${bound}`).toEqual(['cpu', 'memory']);
        }
        expect(pod.securityContext.runAsNonRoot || container.securityContext?.runAsNonRoot, service).toBe(true);
        expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        expect(pod.automountServiceAccountToken).toBe(false);
        // The root filesystem is read-only: temporary files go to an emptyDir.
        expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        expect(pod.volumes.find((volume: any) => volume.name === 'tmp').emptyDir).toBeDefined();
        expect(pod.topologySpreadConstraints.map((constraint: any) => constraint.labelSelector.matchLabels)).toEqual([
          pod.topologySpreadConstraints[0].labelSelector.matchLabels,
          pod.topologySpreadConstraints[0].labelSelector.matchLabels,
        ]);
        expect(matches(pod.topologySpreadConstraints[0].labelSelector.matchLabels, layout().deployment(service).spec.template.metadata.labels)).toBe(true);
      }
    });

    it('drains before it stops: a preStop pause, then shutdown_grace, all within the termination grace period', () => {
      const graceMs = layout().config().shutdown_grace;
      for (const service of SERVICE_NAMES) {
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
        expect(hpa.spec.metrics).toContainEqual({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } });
        expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
        expect(deployment.spec.replicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
        if (name === 'production') expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      }
    });

    it('gives every Deployment a PodDisruptionBudget over its pods', () => {
      for (const service of SERVICE_NAMES) {
        const labels = layout().deployment(service).spec.template.metadata.labels;
        const budgets = layout().all('PodDisruptionBudget').filter((pdb) => matches(pdb.spec.selector.matchLabels, labels));
        expect(budgets, service).toHaveLength(1);
      }
    });

    it('has a Service per service that selects its pods, on a port the container names (grpc, or http for the gateway)', () => {
      for (const service of SERVICE_NAMES) {
        const object = layout().find('Service', service)!;
        expect(object, service).toBeDefined();
        const selected = layout().all('Deployment').filter((deployment) => matches(object.spec.selector, deployment.spec.template.metadata.labels));
        expect(selected.map((deployment) => deployment.metadata.name), service).toEqual([service]);
        const port = only(object.spec.ports as any[], `ports of Service ${service}`);
        expect(port.name).toBe(service === 'gateway' ? 'http' : 'grpc');
        expect(layout().container(service).ports!.map((p) => p.name)).toContain(port.targetPort);
      }
      // Every Service selects pods some Deployment makes.
      for (const object of layout().all('Service')) {
        expect(layout().all('Deployment').some((deployment) => matches(object.spec.selector, deployment.spec.template.metadata.labels)), object.metadata.name).toBe(true);
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

    it('lets only the gateway be reached from outside, through its Ingress', () => {
      const denyAll = layout().all('NetworkPolicy').find((policy) => Object.keys(policy.spec.podSelector).length === 0 && policy.spec.ingress === undefined);
      expect(denyAll?.spec.policyTypes).toEqual(expect.arrayContaining(['Ingress', 'Egress']));
      for (const policy of layout().all('NetworkPolicy')) {
        for (const rule of policy.spec.ingress ?? []) {
          if (!layout().peers(rule.from).has('outside')) continue;
          // A rule open to the outside applies to the gateway's pods and nothing else.
          const selected = SERVICE_NAMES.filter((service) => layout().policiesOf(service).includes(policy));
          expect(selected, policy.metadata.name).toEqual(['gateway']);
          expect(rule.ports.map((p: any) => p.port)).toEqual(['http']);
        }
      }
      const ingress = only(layout().all('Ingress'), 'Ingress');
      const backends = ingress.spec.rules.flatMap((rule: any) => rule.http.paths.map((path: any) => path.backend.service));
      expect(backends).toEqual([{ name: 'gateway', port: { name: 'http' } }]);
      expect(layout().all('Service').every((service) => (service.spec.type ?? 'ClusterIP') === 'ClusterIP')).toBe(true);
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

    it('lets every pod resolve names, and only the services given their URLs reach PostgreSQL and NATS', () => {
      const egressPorts = (service: Service) =>
        new Set(
          layout()
            .policiesOf(service)
            .flatMap((policy) => (policy.spec.egress ?? []).filter((rule: any) => rule.to === undefined).flatMap((rule: any) => rule.ports.map((p: any) => p.port))),
        );
      for (const service of SERVICE_NAMES) {
        const dns = layout()
          .policiesOf(service)
          .flatMap((policy) => policy.spec.egress ?? [])
          .find((rule: any) => rule.to?.some((peer: any) => peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns'));
        expect(dns?.ports, service).toEqual(expect.arrayContaining([{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }]));
        const env = new Set((layout().container(service).env ?? []).map((variable) => variable.name));
        expect(egressPorts(service).has(5432), `${service} → PostgreSQL`).toBe(env.has('ASG_DATABASE_URL'));
        expect(egressPorts(service).has(4222), `${service} → NATS`).toBe(env.has('ASG_EVENTS_URL'));
      }
      expect(egressPorts('llm-gateway').has(443)).toBe(true);
    });

    it('resolves every ConfigMap and Secret reference; the credentials come from the external Secret alone', () => {
      expect(layout().all('Secret')).toEqual([]);
      for (const service of SERVICE_NAMES) {
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
          if (volume.persistentVolumeClaim) expect(layout().find('PersistentVolumeClaim', volume.persistentVolumeClaim.claimName), `${service} volume ${volume.name}`).toBeDefined();
        }
      }
      // The model keys go to the llm-gateway only.
      for (const service of SERVICE_NAMES) {
        const keys = (layout().container(service).env ?? []).filter((variable) => variable.name.endsWith('_API_KEY'));
        expect(keys.length > 0, service).toBe(service === 'llm-gateway');
      }
    });

    it('authenticates at the gateway, whose admin token is a required key of the external Secret (issue 15)', () => {
      const config = layout().config();
      expect(config.host).toBe('0.0.0.0');
      expect(() => checkAuthConfig(config, {})).toThrow(/ASG_ADMIN_TOKEN is not set/);
      expect(() => checkAuthConfig(config, { ASG_ADMIN_TOKEN: 'x'.repeat(32) })).not.toThrow();
      const token = layout().container('gateway').env!.find((variable) => variable.name === 'ASG_ADMIN_TOKEN');
      expect(token?.valueFrom?.secretKeyRef).toEqual({ name: EXTERNAL_SECRET, key: 'ASG_ADMIN_TOKEN' });
      for (const service of SERVICE_NAMES) {
        if (service !== 'gateway') expect(layout().container(service).env?.some((variable) => variable.name === 'ASG_ADMIN_TOKEN'), service).toBeFalsy();
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

    it('requires PostgreSQL and NATS by URL where they are used, rather than fall back to SQLite', () => {
      const required = (service: Service, name: string) => layout().container(service).env!.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef?.optional;
      for (const service of ['conversation-store', 'orchestrator'] as const) {
        expect(required(service, 'ASG_DATABASE_URL'), service).toBe(false);
        expect(required(service, 'ASG_EVENTS_URL'), service).toBe(false);
      }
      expect(required('gateway', 'ASG_EVENTS_URL')).toBe(false);
    });
  });

  describe('single-node overlay', () => {
    const layout = () => rendered.get('single-node')!;

    it('keeps the store on SQLite in a PersistentVolumeClaim, one replica, replaced with Recreate', () => {
      const store = layout().deployment('conversation-store');
      expect(store.spec.replicas).toBe(1);
      expect(store.spec.strategy).toEqual({ type: 'Recreate' });
      const dataDir = layout().config().data_dir;
      const mount = layout().container('conversation-store').volumeMounts!.find((volume) => volume.mountPath === dataDir)!;
      const volume = (store.spec.template.spec.volumes as any[]).find((candidate) => candidate.name === mount.name);
      expect(volume).toEqual({ name: mount.name, persistentVolumeClaim: { claimName: 'conversation-store-data' } });
      expect(layout().find('PersistentVolumeClaim', 'conversation-store-data')!.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(layout().find('HorizontalPodAutoscaler', 'conversation-store')).toBeUndefined();
      // SQLite needs no URL: the store starts without one.
      const database = layout().container('conversation-store').env!.find((variable) => variable.name === 'ASG_DATABASE_URL');
      expect(database?.valueFrom?.secretKeyRef?.optional).toBe(true);
    });
  });
});
