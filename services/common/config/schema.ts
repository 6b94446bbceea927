import { z } from 'zod';
import { LOG_FORMATS, LOG_LEVELS } from '../log-settings.js';
import { MAX_REASON_LENGTH } from '../decision-reason.js';
import { MAX_ISSUER_LENGTH, MAX_PRINCIPAL_NAME_LENGTH } from '../principal-id.js';
import { duration } from './duration.js';
import { proxyEntryProblem } from './proxies.js';
import { treeProblems } from './tree.js';

/**
 * The agent configuration with its defaults. Unknown keys are errors, so a typo never
 * silently falls back to a default.
 */

const name = z.string().trim().min(1, 'a non-empty name');

const APPROVAL_RULES = ['always', 'never', 'auto'] as const;

/** What a role allows — `chat` talks and reads, `approve` decides approvals, `admin` everything. */
export const ROLES = ['chat', 'approve', 'admin'] as const;
export const WEBHOOK_EVENTS = ['approval.requested', 'approval.decided', 'approval.escalated', 'run.completed', 'run.failed'] as const;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name');
const timeoutAction = z.enum(['reject', 'approve']);
/** How long data is kept: `keep` (for ever) or a duration. */
const keptFor = z.union([z.literal('keep'), duration], { error: 'expected "keep" or a duration such as "30d"' });

const tokenName = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'a name of letters, digits, "_", ".", "@" or "-" (at most 64)');

/** Who may call the gateway. Absent: nobody is asked (loopback only, unless `insecure`). */
const authSchema = z.strictObject({
  /** API tokens: the secret is in an environment variable, or only its SHA-256 is in the file. */
  tokens: z
    .array(
      z
        .strictObject({
          /** The token's name: its principal is `token:<name>` (what owns conversations and a decision records as decided_by). */
          name: tokenName,
          token_env: envName.optional(),
          token_sha256: z
            .string()
            .regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits (sha256 of the token)')
            .optional(),
          roles: z.array(z.enum(ROLES)).min(1, 'at least one of chat, approve, admin'),
        })
        .refine((token) => (token.token_env === undefined) !== (token.token_sha256 === undefined), {
          message: 'exactly one of "token_env" or "token_sha256"',
        }),
    )
    .default([]),
  /** JWTs from an OIDC issuer, verified against its JWKS (keys cached, refetched on an unknown key id). */
  jwt: z
    .strictObject({
      issuer: z.string().min(1).max(MAX_ISSUER_LENGTH, `at most ${MAX_ISSUER_LENGTH} characters`),
      audience: z.string().min(1),
      jwks_url: z.url(),
      /** The claim holding the roles (an array of chat/approve/admin, or a space-separated string). */
      roles_claim: z.string().min(1).default('roles'),
      /** The claim naming the identity: a JWT's principal is `jwt:<issuer>#<name>`. */
      name_claim: z.string().min(1).default('sub'),
      /**
       * Added: JWT names (values of `name_claim`) that act as an API token's principal
       * (`token:<name>`) on purpose — owning its conversations and MCP sessions, deciding as it.
       * Empty by default: a JWT and a token of the same name are two principals.
       */
      token_principals: z
        .record(
          z
            .string()
            .min(1)
            .max(MAX_PRINCIPAL_NAME_LENGTH, `a JWT name of at most ${MAX_PRINCIPAL_NAME_LENGTH} characters`)
            .regex(/^[^\p{Cc}\p{Cf}]+$/u, 'a JWT name without control characters'),
          tokenName,
        )
        .default({}),
    })
    .optional(),
});

/**
 * One approval policy rule (services/orchestrator/domain/approval-policy.ts): the tools it is
 * about, an optional CEL condition over the call, and what it decides — `decide: approve` or
 * `reject`, or `require` (stop for a human). Its CEL is compiled and type-checked by the
 * configuration check, which knows the variables; here only the shape.
 */
const approvalPolicySchema = z
  .strictObject({
    /** Audited as `policy:<name>`. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a name of letters, digits, "_", "." or "-" (at most 64)'),
    /** Tool name patterns (`*`, `?` wildcards) over the tool's name as the agent sees it, A2A delegations (`a2a_<name>`) included. */
    tools: z.array(z.string().min(1, 'a tool name pattern')).min(1, 'at least one tool name pattern'),
    /** A CEL expression over the call; absent: the rule matches every call of its tools. */
    when: z.string().trim().min(1, 'a CEL expression (or leave "when" out)').optional(),
    decide: z.enum(['approve', 'reject']).optional(),
    /** With `decide: reject`: what the model is told. */
    reason: z.string().trim().min(1, 'a reason (or leave it out)').max(MAX_REASON_LENGTH).optional(),
    /** Stop for a human: `approvals` distinct people holding `role` (default approve), with not_requester none of them the requester. */
    require: z
      .strictObject({
        approvals: z.number().int().min(1).max(10).default(1),
        role: z.enum(ROLES).optional(),
        not_requester: z.boolean().default(false),
      })
      .optional(),
    /** After `after` without a decision, the approval's quorum counts the votes of `to_role` too (stored, polled, done once). */
    escalate: z.strictObject({ after: duration, to_role: z.enum(ROLES) }).optional(),
  })
  .superRefine((rule, context) => {
    if ((rule.decide === undefined) === (rule.require === undefined))
      context.addIssue({ code: 'custom', message: 'exactly one of "decide" (approve or reject) and "require"', path: [] });
    if (rule.reason !== undefined && rule.decide !== 'reject')
      context.addIssue({ code: 'custom', message: 'a reason goes with "decide: reject": it is what the model is told', path: ['reason'] });
    if (rule.escalate !== undefined && rule.require === undefined)
      context.addIssue({
        code: 'custom',
        message: 'escalation goes with "require": only a call that waits for a human can escalate',
        path: ['escalate'],
      });
  });

export type ApprovalPolicyRule = z.infer<typeof approvalPolicySchema>;

/** When a pending approval expires, and what its expiry decides; per tool by the first matching pattern. */
export const approvalsSchema = z.strictObject({
  /** 0: an approval waits for a human forever. */
  timeout: z.union([z.literal(0), duration]).default(0),
  on_timeout: timeoutAction.default('reject'),
  /** Per tool-name pattern (`*`, `?` wildcards; the first matching pattern applies, in config order). */
  tools: z
    .record(z.string().min(1), z.strictObject({ timeout: z.union([z.literal(0), duration]), on_timeout: timeoutAction.optional() }))
    .default({}),
  /** Approval policies: the first rule that matches a call decides it; none matching, the annotations do. */
  policies: z
    .array(approvalPolicySchema)
    .default([])
    .superRefine((rules, context) => {
      const seen = new Set<string>();
      rules.forEach((rule, index) => {
        if (seen.has(rule.name))
          context.addIssue({ code: 'custom', message: `a second rule named "${rule.name}": names must be unique`, path: [index, 'name'] });
        seen.add(rule.name);
      });
    }),
});

/** Signed notifications (Standard Webhooks) of approvals and runs. */
const webhookSchema = z.strictObject({
  url: z.url(),
  /** The variable holding the secret, in the spec's `whsec_<base64>` form. */
  secret_env: envName,
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1, 'at least one event'),
});

const mcpServerSchema = z
  .strictObject({
    name,
    /** Streamable HTTP endpoint, e.g. http://localhost:8090/mcp. */
    url: z.url().optional(),
    /** stdio transport: the program to start. */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    /** Extra environment for a stdio server. */
    env: z.record(z.string(), z.string()).default({}),
    /** Per-call deadline: no call waits forever. */
    timeout: duration.default(30_000),
    /**
     * Whether the server's readOnlyHint/destructiveHint annotations decide
     * approvals (services/tool-broker/policy.ts). false: every tool of the server needs an approval unless an
     * `approval` rule says otherwise — for servers that might lie about their tools.
     */
    trust_annotations: z.boolean().default(true),
    /**
     * Per tool-name pattern (`*`, `?` wildcards; the first
     * matching pattern applies, in config order), `always` (every call needs an approval),
     * `never` (no call does) or `auto` (the annotations decide, as trust_annotations allows).
     */
    approval: z.record(z.string().min(1), z.enum(APPROVAL_RULES)).default({}),
    /**
     * False (default): a server that cannot be started or reached is reported
     * once and retried in the background while the agent runs without its tools (GET /tools and
     * GET /ready say so). true: the agent does not start without it.
     */
    required: z.boolean().default(false),
    /**
     * HTTP servers only: the name of an environment variable holding a bearer
     * token sent on every request to the server (the value is read at startup, never logged).
     */
    bearer_token_env: envName.optional(),
    /**
     * HTTP servers only: OAuth 2 client credentials. The token endpoint is
     * discovered from the server (MCP authorization: RFC 9728 protected-resource metadata, then
     * RFC 8414 authorization-server metadata); `issuer` pins the authorization server the
     * secret may be sent to.
     */
    oauth: z
      .strictObject({
        client_id: z.string().min(1),
        client_secret_env: envName,
        scope: z.string().min(1).optional(),
        issuer: z.url().optional(),
      })
      .optional(),
  })
  .refine((server) => Boolean(server.url) !== Boolean(server.command), {
    message: 'exactly one of "url" (Streamable HTTP) or "command" (stdio)',
  })
  .refine((server) => server.url || (!server.bearer_token_env && !server.oauth), {
    message: '"bearer_token_env" and "oauth" apply to HTTP servers ("url") only',
  })
  .refine((server) => !(server.bearer_token_env && server.oauth), {
    message: 'at most one of "bearer_token_env" or "oauth"',
  });

const a2aAgentSchema = z.strictObject({
  name,
  url: z.url(),
  description: z.string().default(''),
  destructiveHint: z.boolean().default(false),
  /** Per-call deadline: no call waits forever. */
  timeout: duration.default(60_000),
});

const NODE_TYPES = ['llm', 'sequential', 'parallel', 'loop', 'a2a'] as const;
const APPROVAL_MODES = ['auto', 'required'] as const;

/** One node of the agent tree (docs/configuration.md, "The agent tree"). */
export interface AgentNodeInput {
  name: string;
  type: (typeof NODE_TYPES)[number];
  agents?: AgentNodeInput[];
  model?: string;
  /** llm nodes: this node's model-call deadline in ms (a duration in YAML); default llm.timeout. */
  timeout?: number;
  prompt?: string;
  output_key?: string;
  can_exit_loop?: boolean;
  max_iterations?: number;
  /**
   * parallel and loop nodes: `auto` (the default) lets destructive calls below run
   * without approval, logged and marked; `required` keeps the approval gate for them.
   */
  approvals?: (typeof APPROVAL_MODES)[number];
  url?: string;
  description?: string;
  destructiveHint?: boolean;
  a2a?: z.input<typeof a2aAgentSchema>[];
}

// Output type AgentNodeInput (durations already in ms); the YAML input may spell them as strings.
const agentNodeSchema: z.ZodType<AgentNodeInput, unknown> = z.lazy(() =>
  z.strictObject({
    name,
    type: z.enum(NODE_TYPES),
    agents: z.array(agentNodeSchema).optional(),
    model: z.string().min(1).optional(),
    timeout: duration.optional(),
    prompt: z.string().optional(),
    output_key: z.string().min(1).optional(),
    can_exit_loop: z.boolean().optional(),
    max_iterations: z.number().int().positive().optional(),
    approvals: z.enum(APPROVAL_MODES).optional(),
    url: z.url().optional(),
    description: z.string().optional(),
    destructiveHint: z.boolean().optional(),
    a2a: z.array(a2aAgentSchema).optional(),
  }),
);

const rateRuleSchema = z.strictObject({
  calls: z.number().int().positive(),
  window: duration,
});

/**
 * Where a service is reached: "host:port", or a gRPC target naming its resolver: "dns:///host:port"
 * (every address the name resolves to, balanced round robin: a headless Kubernetes Service),
 * "dns://server/host:port", or a fixed list "ipv4:10.0.0.1:7101,10.0.0.2:7101" / "ipv6:[::1]:7101".
 */
const address = z
  .string()
  .regex(
    /^(?:dns:\/\/[^/\s]*\/)?[^\s:/]+:\d{1,5}$|^ipv[46]:\S+$/,
    'an address "host:port", "dns:///host:port" or "ipv4:host:port,host:port"',
  );

/**
 * The connections between services (docs/architecture.md, "gRPC connections").
 * Every service reads it: the keepalive of its clients, and the connection age, ping policy and
 * drain of its server.
 */
const grpcSchema = z.strictObject({
  /** A client pings a connection idle this long (also between calls), so a peer that vanished is noticed before the next call. */
  keepalive_time: duration.default(30_000),
  /** How long a ping may go unanswered before the connection is dropped. */
  keepalive_timeout: duration.default(10_000),
  /** A server ends (GOAWAY) each connection this old, ±10%, so clients re-resolve and new replicas get traffic. */
  max_connection_age: duration.default(300_000),
  /** Calls on an aged connection may finish for this long; then it is closed (a stream still open is resumed by its reader). */
  max_connection_age_grace: duration.default(30_000),
  /**
   * On a stop, how long a server keeps serving while its health already says NOT_SERVING, so
   * probes and load balancers take it out before it refuses connections. 0 by default (gRPC
   * clients leave at the GOAWAY on their own); under Kubernetes set it to the readiness probe's
   * period. Bounded by `shutdown_grace`.
   */
  drain_delay: z.union([z.literal(0), duration]).default(0),
  /**
   * In `asg up` (every service in one process), services call each other's
   * handlers directly instead of over loopback gRPC — the same contracts (protobuf bytes,
   * metadata, deadlines, statuses), without HTTP/2 and sockets. `false`: loopback gRPC
   * everywhere, to compare or debug. Services started alone (`asg serve`) always use gRPC.
   */
  in_process: z.boolean().default(true),
});

export type GrpcSettings = z.output<typeof grpcSchema>;
/** The defaults, for callers built without a configuration (tools, tests). */
export const DEFAULT_GRPC_SETTINGS: GrpcSettings = grpcSchema.parse({});

export const configSchema = z
  .strictObject({
    name: z.string().default('agent'),
    description: z.string().default(''),
    prompt: z.string().default('You are a helpful assistant. Use the tools you have when they help answer the user.'),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    data_dir: z.string().min(1).default('./data'),
    /**
     * Where the conversation store keeps its data. `url` empty: SQLite in
     * `data_dir` (one machine); `postgres://…`: PostgreSQL, shared by any number of store
     * replicas. ASG_DATABASE_URL, when set, wins over `url` (it may carry a password, which is
     * never logged).
     */
    store: z
      .strictObject({
        url: z
          .string()
          .trim()
          .refine((value) => value === '' || /^postgres(ql)?:\/\//i.test(value), 'empty (SQLite in data_dir) or a postgres:// URL')
          .default(''),
        /** PostgreSQL only: the connection pool's limits. */
        pool: z
          .strictObject({
            max_connections: z.number().int().min(1).max(1000).default(10),
            /** A statement running longer is cancelled by the server. */
            statement_timeout: duration.default(30_000),
            /** A transaction idle this long is ended by the server, releasing its locks. */
            idle_in_transaction_timeout: duration.default(60_000),
            /** Waiting for a connection fails after this. */
            connect_timeout: duration.default(10_000),
          })
          .prefault({}),
      })
      .prefault({}),
    /**
     * How stored and live events reach the store replicas other than the one
     * that wrote them. `url` empty: PostgreSQL LISTEN/NOTIFY (or nothing to cross with SQLite);
     * `nats://[user:password@]host:port`: NATS JetStream, with a PostgreSQL store only.
     * ASG_EVENTS_URL, when set, wins over `url` (its credentials are never logged).
     */
    events: z
      .strictObject({
        url: z
          .string()
          .trim()
          .refine((value) => value === '' || /^nats:\/\//i.test(value), 'empty (no NATS) or a nats:// URL')
          .default(''),
        /**
         * The name the JetStream stream and subjects are made from: stream `<PREFIX>_EVENTS`
         * (upper case), subjects `<prefix>.events.>`. Deployments sharing one NATS keep apart by it.
         */
        prefix: z
          .string()
          .trim()
          .regex(/^[a-z0-9_-]{1,32}$/, 'lower-case letters, digits, "_" or "-" (1 to 32)')
          .default('asg'),
        /** How long the stream keeps an event: a replica that was cut off longer reads the events table instead. */
        max_age: duration.default(24 * 3_600_000),
        /**
         * How long the events table (the outbox of NATS, webhooks and A2A push, and what a
         * `Last-Event-ID` resumes from) keeps an event: older ones are pruned once every consumer
         * has passed them; a consumer still behind them then is logged and skipped past.
         */
        keep: duration.refine((value) => value >= 60_000, 'at least 1m').default(7 * 86_400_000),
      })
      .prefault({}),
    /**
     * What the HTTP server answers for, guarding a local API against the
     * browser (DNS rebinding, cross-site requests).
     */
    server: z
      .strictObject({
        /**
         * Host header values (a name, optionally with ":port"; `*.example.com` matches any
         * subdomain) the gateway answers for. Empty: the loopback names when bound to loopback,
         * any host when bound to another address; the host of `public_url` is always allowed.
         */
        allowed_hosts: z.array(z.string().trim().min(1)).default([]),
        /**
         * On a stop, how long the gateway keeps serving new requests while /ready
         * already answers 503 "draining", so that a load balancer or Kubernetes takes the replica
         * out before any request is refused (a rolling restart then fails none). Unset: 5 s when
         * `host` is beyond loopback (something may balance over it), 0 on loopback (nothing
         * does; local starts and tests stop at once): gateway/http/drain.ts, serverDrainDelay.
         * Under Kubernetes, the readiness probe's period or more. Bounded by `shutdown_grace`.
         */
        drain_delay: z.union([z.literal(0), duration]).optional(),
        /**
         * The URL the service is reached at from outside (e.g. behind a proxy); its host and origin
         * are the server's own, and the agent card gives `<public_url>/a2a` as the A2A endpoint.
         */
        public_url: z.url().optional(),
        /**
         * Proxies (IP addresses or CIDR ranges) whose `X-Forwarded-Proto` and
         * `X-Forwarded-Host` the agent card's URL follows when `public_url` is not set. Empty by
         * default: forwarded headers are ignored, and the card's URL is the request's own.
         */
        trusted_proxies: z
          .array(
            z
              .string()
              .trim()
              .superRefine((entry, context) => {
                const problem = proxyEntryProblem(entry);
                if (problem) context.addIssue({ code: 'custom', message: problem });
              }),
          )
          .default([]),
        cors: z
          .strictObject({
            /** Origins (scheme://host[:port], or `*`) besides the server's own that browsers may call from; CORS headers go only to these. */
            allowed_origins: z.array(z.string().trim().min(1)).default([]),
          })
          .prefault({}),
      })
      .prefault({}),
    /**
     * Runs with leases. The orchestrator replica that runs a turn holds a
     * lease on it and renews it every third of `lease_ttl`; when the replica dies (or drains
     * and hands the run back), another replica takes the run over once the lease has expired
     * and finishes it from what is stored (docs/architecture.md, "Runs with leases").
     */
    runs: z
      .strictObject({
        /** How long a run stays with a replica that stopped renewing its lease. */
        lease_ttl: duration.refine((value) => value >= 1_000 && value <= 3_600_000, 'between 1s and 1h').default(15_000),
        /** How often each replica looks for runs whose lease expired. */
        takeover_interval: duration.refine((value) => value >= 100 && value <= 60_000, 'between 100ms and 1m').default(1_000),
        /** A turn taken over more often than this (it keeps killing its replicas) is ended with a note instead. */
        max_takeovers: z.number().int().min(1).max(100).default(3),
        /**
         * How long a run's journal (its steps) is kept after the run ended: the lifecycle sweep
         * removes older ones. A run still running or waiting for approval is kept. `keep`: for ever.
         */
        keep: keptFor.prefault('30d'),
      })
      .prefault({}),
    /**
     * A2A push notifications. A caller names the url; by default only public
     * addresses are called (no loopback, private or link-local network: SSRF).
     */
    a2a_push: z
      .strictObject({
        /** Also call receivers on loopback, private and link-local addresses (a receiver on the same network; tests). */
        allow_private_networks: z.boolean().default(false),
      })
      .prefault({}),
    /** Authentication at the gateway; see authSchema. */
    auth: authSchema.optional(),
    /** Serve a non-loopback `host` without `auth` (anyone who reaches the port may approve). */
    insecure: z.boolean().default(false),
    /** Approval expiry. */
    approvals: approvalsSchema.prefault({}),
    /** Webhooks. */
    webhooks: z.array(webhookSchema).default([]),
    /**
     * How long data is kept: a background sweep (one replica at a time, never on a turn's
     * path) deletes a conversation unchanged for longer than `conversations` as DELETE
     * /conversations/:id does, and audit entries older than `audit`. `keep`: kept for ever.
     */
    retention: z
      .strictObject({
        conversations: keptFor.default('keep'),
        audit: keptFor.default('keep'),
        /** How often the sweep runs (retention and the pruning of events.keep). */
        sweep_interval: duration.refine((value) => value >= 1_000 && value <= 3_600_000, 'between 1s and 1h').default(60_000),
      })
      .prefault({}),
    /** On SIGTERM/SIGINT, how long in-flight requests may take to finish before the process stops anyway. */
    shutdown_grace: duration.default(10_000),
    /**
     * The logs. LOG_LEVEL and LOG_FORMAT (the CLI's --log-level and
     * --log-format) win over these. `auto`: pretty lines on a terminal, JSON lines otherwise.
     */
    log: z
      .strictObject({
        level: z.enum(LOG_LEVELS).default('info'),
        format: z.enum(LOG_FORMATS).default('auto'),
      })
      .prefault({}),
    /**
     * Prometheus metrics at GET /metrics. On the gateway, with `auth` on, only
     * the admin role may read them unless `public` is true; without `auth` they are open like
     * every route. A service run alone (`asg serve <service>`) also serves them, without
     * authentication, on `port` (a gRPC service on all interfaces, like its gRPC port; the
     * gateway on its `host`; ASG_METRICS_PORT wins; 0: no metrics port).
     */
    metrics: z
      .strictObject({
        public: z.boolean().default(false),
        port: z.number().int().min(0).max(65535).default(9464),
      })
      .prefault({}),
    llm: z
      .strictObject({
        model: z.string().min(1).default('gemini-2.5-flash'),
        /** Deadline of one model call. */
        timeout: duration.default(60_000),
        /** Sent only when set. */
        temperature: z.number().min(0).max(2).optional(),
        /** Sent only when set; Anthropic, which requires it, gets 4096 otherwise. */
        max_tokens: z.number().int().positive().optional(),
        /** Retries of a model call on 429, 5xx and network errors. */
        retry: z
          .strictObject({
            max_retries: z.number().int().min(0).max(10).default(3),
            initial_backoff: duration.default(1_000),
            multiplier: z.number().min(1).max(10).default(2),
            max_backoff: duration.default(30_000),
          })
          .prefault({}),
      })
      .prefault({}),
    /** Limits of one turn. */
    chat: z
      .strictObject({
        max_llm_iterations: z.number().int().positive().default(10),
        /** Token budget of the prompt; 0 = the model's context window from the built-in table. */
        max_tokens: z.number().int().min(0).default(0),
        /** What to do when the history outgrows the budget. */
        compaction_strategy: z.enum(['delete-old', 'delete-middle', 'partial-summary', 'none']).default('delete-old'),
        /** Deadline of one whole turn (every model and tool call in it). */
        turn_timeout: duration.default(300_000),
      })
      .prefault({}),
    /** Calls per window for models and tools, by name pattern with * and ? wildcards. */
    rate_limits: z
      .strictObject({
        /** How long a call over the limit may wait for a slot before it fails. */
        max_wait: duration.default(10_000),
        models: z.record(z.string().min(1), rateRuleSchema).default({}),
        tools: z.record(z.string().min(1), rateRuleSchema).default({}),
      })
      .prefault({}),
    mcp_servers: z.array(mcpServerSchema).default([]),
    /**
     * The agent served as an MCP server at /mcp (Streamable HTTP)
     * with one tool that runs a turn.
     */
    serve_mcp: z
      .strictObject({
        enabled: z.boolean().default(true),
        tool: z
          .strictObject({
            name: z
              .string()
              .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tool name: letters, digits, "_", "-", "." (at most 64)')
              .default('ask'),
            description: z
              .string()
              .default('Ask the agent. It may use its tools, and stops for a human approval before any destructive call.'),
            argument_name: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'an argument name: a letter or "_", then letters, digits or "_"')
              .default('message'),
            argument_description: z.string().default('What to ask the agent, in plain language.'),
          })
          .prefault({}),
        /**
         * Added: the 2025-era sessions (initialize + Mcp-Session-Id) the gateway keeps open: in all,
         * and per principal (with `auth`). A principal's session past its bound closes one of its own.
         */
        sessions: z
          .strictObject({
            max: z.number().int().min(1).max(100_000).default(1000),
            max_per_principal: z.number().int().min(1).max(100_000).default(20),
          })
          .prefault({}),
      })
      .prefault({}),
    a2a: z.array(a2aAgentSchema).default([]),
    /** The most A2A hops a chain of agents may take (a call past it fails: the loop guard). */
    a2a_max_depth: z.number().int().min(1).max(50).default(5),
    agent: agentNodeSchema.optional(),
    /**
     * Where each service listens and is reached when services run apart
     * (`asg serve <service>`). `asg up` ignores it and uses free loopback ports.
     */
    grpc: grpcSchema.prefault({}),
    services: z
      .strictObject({
        conversation_store: address.default('127.0.0.1:7101'),
        llm_gateway: address.default('127.0.0.1:7102'),
        tool_broker: address.default('127.0.0.1:7103'),
        orchestrator: address.default('127.0.0.1:7104'),
        a2a_bridge: address.default('127.0.0.1:7105'),
      })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.mcp_servers.forEach((server, index) => {
      if (seen.has(server.name))
        ctx.addIssue({
          code: 'custom',
          path: ['mcp_servers', index, 'name'],
          message: `a unique server name ("${server.name}" is used twice)`,
        });
      seen.add(server.name);
    });
    const agents = new Set<string>();
    config.a2a.forEach((agent, index) => {
      if (agents.has(agent.name))
        ctx.addIssue({ code: 'custom', path: ['a2a', index, 'name'], message: `a unique agent name ("${agent.name}" is used twice)` });
      agents.add(agent.name);
    });
    if (config.agent) {
      for (const problem of treeProblems(config.agent)) {
        // `node` makes the loader write the node's name beside its path.
        ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message, params: { node: problem.node } });
      }
    }
  });

export type AgentConfig = z.output<typeof configSchema>;
export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type A2aAgentConfig = z.output<typeof a2aAgentSchema>;
export type ServiceName = keyof AgentConfig['services'];

/** The rules of one `rate_limits` section, in config order (the first matching rule applies). */
export function rateRules(section: Record<string, { calls: number; window: number }>) {
  return Object.entries(section).map(([pattern, rule]) => ({ pattern, calls: rule.calls, windowMs: rule.window }));
}
