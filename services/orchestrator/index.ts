import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown } from '../common/grpc/server.js';
import { configuredModels } from '../common/config/configured-models.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import type { Peers, RunningService, ServiceOptions } from '../common/service.js';
import { createClients } from './clients.js';
import { loadTokenizerOf } from './domain/tokens.js';
import { RunLeases, runNode } from './leases.js';
import { TakeoverLoop } from './takeover-loop.js';
import { EscalationLoop } from './escalation-loop.js';
import { ExpiryLoop } from './expiry-loop.js';
import { LifecycleSweep, sweepSettings } from './lifecycle-sweep.js';
import { startWebhooks, webhookEndpoints, type DeliveryOptions } from './webhooks/index.js';
import { a2aPushTarget } from './webhooks/push.js';

export { runNode } from './leases.js';
import { orchestratorHandlers } from './server.js';
import { TurnRunner } from './turns.js';

/** Time left before the stop's deadline to hand unfinished runs back (release their leases). */
const HAND_BACK_MARGIN_MS = 1_000;

/**
 * Starts the orchestrator: stateless, so any number of replicas can serve any conversation.
 * Ready (health SERVING) once it listens. Its readiness does not follow its peers': a store or
 * model outage fails the turns that need it with that peer's status, and taking every
 * orchestrator out with it would only turn those clear answers into "no backend".
 */
export async function startOrchestrator(
  options: ServiceOptions<OrchestratorConfig> & {
    peers: Pick<Peers, 'conversationStore' | 'llmGateway' | 'toolBroker' | 'a2aBridge'>;
    /** Where this replica runs, stable across its restarts (leases.ts runNode); by default the host and the address it listens on. */
    node?: string;
    /** Where webhook secrets (`webhooks[].secret_env`) are read, once, at start; `process.env` by default. */
    env?: NodeJS.ProcessEnv;
    /** How webhook deliveries are paced (deadline, retries, backoff); not in the configuration file. */
    webhookDelivery?: Partial<DeliveryOptions>;
  },
): Promise<RunningService> {
  // Checked before anything starts: a webhook without its secret stops the start, naming the variable.
  const endpoints = webhookEndpoints(options.config.webhooks, options.env ?? process.env);
  // Before the first turn: the token tables of an OpenAI model load synchronously (domain/tokens.ts).
  for (const { model } of configuredModels(options.config)) loadTokenizerOf(model);
  const clients = createClients(options.config, options.peers, options.inProcess);
  const server = createServer(options.config.grpc);
  const health = new ServingHealth(server, [OrchestratorServiceService]);
  const leases = new RunLeases(options.node ?? runNode(options.listen), options.config.runs.lease_ttl, clients, options.log);
  // The CEL engine loads only for an agent that has policies: some 180 ms of every other start.
  const rules = options.config.approvals.policies;
  const policies = rules.length > 0 ? (await import('./domain/approval-policy.js')).ApprovalPolicies.compile(rules) : undefined;
  const turns = new TurnRunner(options.config, clients, options.log, leases, policies);
  const handlers = orchestratorHandlers(turns);
  server.addService(OrchestratorServiceService, implement(OrchestratorServiceService, 'orchestrator', handlers, options.log));
  const port = await listen(server, options.listen);
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  const local = serveInProcess(
    options.inProcess,
    { definition: OrchestratorServiceService, address: `${host}:${port}`, handlers, service: 'orchestrator', log: options.log },
    health,
  );
  const takeovers = new TakeoverLoop(leases, clients, options.config.runs.takeover_interval, (run) => turns.takeOver(run), options.log);
  takeovers.start();
  // Approvals whose expires_at passed are decided as their on_timeout says, at the takeover loop's pace.
  const expiries = new ExpiryLoop(clients, options.config.runs.takeover_interval, (approval) => turns.expire(approval), options.log);
  expiries.start();
  // Retention and pruning: one replica at a time, by the store's lease.
  const sweep = new LifecycleSweep(clients, sweepSettings(options.config, { owner: leases.owner, node: leases.node }), options.log);
  sweep.start();
  // Approvals whose escalates_at passed escalate (once, whichever replica asks), at the same pace.
  const escalations = new EscalationLoop(clients, options.config.runs.takeover_interval, options.log);
  escalations.start();
  const pushes = a2aPushTarget(clients, options.config.a2a_push.allow_private_networks);
  const webhooks = startWebhooks(
    endpoints,
    [pushes],
    clients,
    { owner: leases.owner, node: leases.node },
    { leaseTtlMs: options.config.runs.lease_ttl, ...options.webhookDelivery },
    options.log,
  );
  health.markServing();
  let stopping: Promise<void> | undefined;
  let handingBack: Promise<void> | undefined;
  // Turns still running a little before the deadline are handed to another replica (their
  // leases released) rather than cut with nothing recorded; their callers are told so.
  const handBack = (deadline: number) => (handingBack ??= turns.drain(deadline - HAND_BACK_MARGIN_MS));
  return {
    name: 'orchestrator',
    address: `${host}:${port}`,
    port,
    stopsAt: (deadline) => void handBack(deadline),
    // The gateway has drained before this runs (cli/mesh.ts): turns still in flight here are
    // ones it cut, or callers of a served orchestrator; they get what is left of the grace.
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopping ??= (async () => {
        takeovers.stop();
        expiries.stop();
        sweep.stop();
        escalations.stop();
        // A delivery cut here is sent again by the next holder of its cursor (the same webhook-id).
        const webhooksStopped = webhooks.stop();
        await health.beginStop(deadline, options.config.grpc.drain_delay);
        await Promise.all([handBack(deadline), shutdown(server, deadline), local.stop(deadline), webhooksStopped]);
        clients.close();
      })()),
  };
}
