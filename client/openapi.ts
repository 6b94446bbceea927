/**
 * The REST API's types, generated from the OpenAPI document (GET /openapi.json) by
 * openapi-typescript: do not edit; `npm run client:types` writes this file anew.
 */

export interface paths {
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness
         * @description Liveness of the gateway process. It calls no other service, and answers 200 also while the gateway stops (see /ready). Answered for any Host header.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness
         * @description Whether the gateway can serve requests now: the orchestrator and the conversation store answer their gRPC health check (grpc.health.v1) with SERVING — the store only while its database answers — and the gateway is not stopping. For load balancers and readiness probes; /health is the liveness probe. Open to all and answered for any Host header, so it tells states and which dependency is down, in words: why (an error, a stack trace, a path) is in the log.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getReady"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Every metric of this process in Prometheus' text format (text/plain; version=0.0.4): turns and their latency histogram, model calls and tokens by provider and model, tool calls by tool and outcome, approvals pending and decided, errors by kind (docs/operations.md, Metrics). In `asg up` every service's, once. With auth: the admin role, or anyone when metrics.public is true.
         *
         *     **Who may call**: with auth configured: role admin; without auth: anyone.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description The OpenAPI 3.1 document of every route, generated from the schemas the routes validate with.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getOpenapiJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Interactive reference
         * @description The interactive API reference (Scalar) over /openapi.json. The page loads Scalar's script from the gateway itself (/docs/scalar.js), so it works with no network.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/scalar.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The reference page's script
         * @description Scalar's standalone browser bundle (@scalar/api-reference), copied into the build and served from it, so that /docs needs no CDN.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getDocsScalarJs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Who the caller is
         * @description Who the token is: its name (a token's name or a JWT's subject), its roles, and whether authentication is on. Without `auth` everyone is "anonymous" with every role.
         *
         *     **Who may call**: with auth configured: any signed-in caller; without auth: anyone.
         */
        get: operations["getAuthWhoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth protected-resource metadata
         * @description The OAuth protected-resource metadata (RFC 9728) of /mcp, naming the OIDC issuer as its authorization server: an MCP client reads it from a 401's `resource_metadata` to learn where to sign in.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         *
         *     Served only when auth.jwt is configured.
         */
        get: operations["getWellKnownOauthProtectedResource"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth protected-resource metadata
         * @description The OAuth protected-resource metadata (RFC 9728) of /mcp, naming the OIDC issuer as its authorization server: an MCP client reads it from a 401's `resource_metadata` to learn where to sign in.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         *
         *     Served only when auth.jwt is configured.
         */
        get: operations["getWellKnownOauthProtectedResourceMcp"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tools the agent offers its model
         * @description Every MCP server's tools and every A2A sub-agent as a tool named a2a_<name> with one string parameter "message". destructiveHint is the effective policy: true means a call stops for a human approval.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        get: operations["getTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List conversations
         * @description Conversations, newest first, one page at a time, with counts by status over all of them (with auth: those the caller may read — its own, or every one for approve and admin). Each item is a summary without messages. "next_cursor" is present when there is a next page: pass it back as ?cursor=. Other query parameters are ignored.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getConversations"];
        put?: never;
        /**
         * Create a conversation
         * @description Creates a conversation. With a message, the agent runs a turn at once: the reply has "result", which may be an approval request instead of an answer.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postConversations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a conversation
         * @description One conversation with its messages (oldest first), its pending approvals and its pipeline state. A history of up to 1000 messages comes whole; a longer one comes as its newest page with "has_more_before": true: ?before=<id of the first message shown> reads the page before it.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getConversationsId"];
        put?: never;
        post?: never;
        /**
         * Delete a conversation
         * @description Deletes the conversation with its messages, events, run, approvals and push-notification configs, in one transaction. A pending approval of it is rejected first with the reason "conversation deleted" (audited); the audit trail keeps its entries and gets a conversation.deleted entry. Afterwards every face answers the id as unknown, and a live event stream of it ends with a conversation_deleted event. Its owner or an admin may delete it.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        delete: operations["deleteConversationsId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A conversation's runs
         * @description The runs of a conversation as their journal keeps them, newest first, a page at a time (?limit= and ?cursor= / next_cursor): each with its status, start, end (null while it runs) and how many steps it recorded. GET /runs/{run_id} reads one with its steps.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getConversationsIdRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a run, step by step
         * @description A run with every step of its journal in order: each node started and finished (agent trees), each model call (model, provider, duration, tokens, finish reason), each tool call (tool, server, arguments with secrets redacted, their hash, outcome and the result's first characters), each approval asked and decision made (who, through which face, why, edited arguments), each A2A delegation and history compaction.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getRunsRunId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/runs/{run_id}/fork": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Fork a run at a step
         * @description A new conversation, owned by the caller, with the run's conversation's messages before the step (the steps' message_seq), which goes on from there: calls the model asked for whose results come after the step run again — read-only ones at once, destructive ones only after a new approval of their own (nothing of the original's approvals or decisions is copied) — then the model answers; with "message", the message is sent as the next user message instead. A history that ends with a complete answer is only copied (copied_only). Results recorded before the step are reused, not recomputed. The original conversation is unchanged. Runs of an agent tree cannot be forked yet.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postRunsRunIdFork"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations/{id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a message
         * @description Sends a user message and runs a turn. While the conversation waits for an approval the message is not processed: result.waiting_approval is true and result.approval is the pending approval. A conversation runs one turn at a time: while one runs ("turn_running": true) the message is refused with 409; wait for the turn_ended event of the event stream and send it again.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postConversationsIdMessages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/conversations/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Event stream of a conversation
         * @description The conversation's events as server-sent events (the tRPC subscription conversation.events is the same stream). Each message is `event: <kind>` and `data: <JSON>` in the REST shapes; stored events also carry `id:`, so an EventSource that reconnects sends Last-Event-ID and gets exactly the events it missed. Without Last-Event-ID the stream begins with `event: snapshot`, data {"conversation": C}. A failure after the stream began is its last message, `event: stream_error`.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getConversationsIdEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/approvals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List approvals
         * @description Every approval of every conversation, oldest first, one page at a time. "approved" is every approval said yes to (by a human or an expiry that approves), whatever came of its call: "execution" says that once the call has started. "rejected" is a human's no; "expired" an approval nobody decided before its expires_at whose on_timeout rejected it (decided_by "timeout"). Other query parameters are ignored.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        get: operations["getApprovals"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/approvals/{uuid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an approval
         * @description One approval, whatever its status: the call as the model asked for it (tool_args) and its record — who decided, when, through which face, the reason, the arguments the call ran with when they were edited (edited_args), and when it expires if nobody decides it.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        get: operations["getApprovalsUuid"];
        put?: never;
        /**
         * Approve or reject
         * @description Approves or rejects a pending destructive call. Approving runs the stored call (or, with "arguments", the call with the edited arguments) and the agent goes on; rejecting cancels it: the model is told "Rejected by a human: <reason>" and that the call must not be retried unless the user asks. In an agent tree a rejection cancels the pipeline. Each approval is decided once: a second decision, concurrent or later, runs nothing and gets 409 naming the first. The decision is recorded with who decided, when and through which face (via "rest", or "cli" with X-ASG-Via: cli). An approval whose description says that an MCP server asks for input is answered the same way: approving with "input" sends that answer to the server and the call goes on; rejecting declines the question.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        post: operations["postApprovalsUuid"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit trail
         * @description Newest first, append-only: every decision (approval.decided, approval.expired), configuration load (config.loaded) and authentication failure (auth.failed), with who (actor), through which face (via), what it concerns (subject) and the details (never a token).
         *
         *     **Who may call**: with auth configured: role admin; without auth: anyone.
         */
        get: operations["getAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/agent-card.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A2A agent card
         * @description The agent card: the agent as an A2A server, its endpoint (/a2a), its skills (its tools) and, with auth, its security scheme.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getWellKnownAgentCardJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/agent.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A2A agent card (older path)
         * @description The agent card: the agent as an A2A server, its endpoint (/a2a), its skills (its tools) and, with auth, its security scheme.
         *
         *     **Who may call**: anyone, without a token, also when auth is configured.
         */
        get: operations["getWellKnownAgentJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/a2a": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A2A JSON-RPC endpoint
         * @description JSON-RPC 2.0 in three dialects: type-parts, the early one (message/send, tasks/get, parts {"type":"text"}), A2A v0.3 (message/send, message/stream, tasks/get, tasks/list, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/set|get|list|delete) and A2A v1.0 (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, Create/Get/List/DeleteTaskPushNotificationConfig(s), with the header A2A-Version: 1.0). A message to a terminal task is -32004 and starts no turn; a contextId that is not the task's is -32602; blocking: false (v0.3) / returnImmediately (v1.0) answers the task at once while the turn runs. Task id = conversation id; a waiting conversation is input-required with "Approval required (id: <uuid>): <description>" and, in v0.3/v1.0, a data part {"approval": {...}}; a message/send with taskId and yes/no (or a data part {"approved": bool}, with an optional "reason") decides it. JSON-RPC errors are answered with HTTP 200: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 bad params, -32001 unknown task, -32004 unsupported operation. The streaming methods answer with server-sent events, each data a JSON-RPC answer.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postA2a"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * MCP server-to-client stream
         * @description The 2025 revisions' stream of server-to-client messages of a session (Mcp-Session-Id).
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         *
         *     Served only when serve_mcp.enabled is true (the default).
         */
        get: operations["getMcp"];
        put?: never;
        /**
         * MCP JSON-RPC endpoint
         * @description The agent as an MCP server over Streamable HTTP: one tool that runs a turn, and approvals asked back through elicitation. Both protocol generations the SDK serves: 2026-07-28 statelessly (any replica answers), and the 2025 revisions with sessions (Mcp-Session-Id). Answers are JSON or server-sent events, as the client accepts (send Accept: application/json, text/event-stream).
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         *
         *     Served only when serve_mcp.enabled is true (the default).
         */
        post: operations["postMcp"];
        /**
         * End an MCP session
         * @description Ends a 2025-revision session (Mcp-Session-Id).
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         *
         *     Served only when serve_mcp.enabled is true (the default).
         */
        delete: operations["deleteMcp"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The agent as a model
         * @description One model: the agent, with the configuration's `name` as its id.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        get: operations["getV1Models"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/{model}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The agent as a model, by id
         * @description The agent, when `model` is its id; 404 in OpenAI's shape otherwise.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        get: operations["getV1ModelsModel"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/chat/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A turn as a chat completion
         * @description The last user message is the turn's input; the conversation is the one named by the X-Conversation-Id header, else by `user`, else the caller's own conversation whose history the request resends (the user and assistant messages before the last user message, as the previous answer left them; white space does not count), else a new one (its id in the X-Conversation-Id header and `conversation_id`). `usage` counts the tokens of the turn's model calls. With `stream: true` the answer is server-sent `chat.completion.chunk` events ending with `data: [DONE]` (with `stream_options.include_usage`, a chunk with the usage and no choices before it). A turn that stops for approval answers with a text naming the approval uuid and how to decide it (POST /approvals/:uuid), and the approval in `approval` (on the last chunk when streaming). Fields accepted and ignored: audio, frequency_penalty, function_call, functions, logit_bias, logprobs, max_completion_tokens, max_tokens, metadata, modalities, parallel_tool_calls, prediction, presence_penalty, prompt_cache_key, reasoning_effort, response_format, safety_identifier, seed, service_tier, stop, store, temperature, tool_choice, tools, top_logprobs, top_p, verbosity, web_search_options; any other unknown field is a 400.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postV1ChatCompletions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/auth.whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * auth.whoami (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: any signed-in caller; without auth: anyone.
         */
        get: operations["getTrpcAuthWhoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversations.create": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * conversations.create (mutation)
         * @description A tRPC mutation: the input is the JSON body. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postTrpcConversationsCreate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversations.list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * conversations.list (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcConversationsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversations.get": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * conversations.get (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcConversationsGet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversations.send": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * conversations.send (mutation)
         * @description A tRPC mutation: the input is the JSON body. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postTrpcConversationsSend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversations.delete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * conversations.delete (mutation)
         * @description A tRPC mutation: the input is the JSON body. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postTrpcConversationsDelete"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/approvals.list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * approvals.list (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcApprovalsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/approvals.get": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * approvals.get (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcApprovalsGet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/approvals.resolve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * approvals.resolve (mutation)
         * @description A tRPC mutation: the input is the JSON body. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        post: operations["postTrpcApprovalsResolve"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/approvals.pending": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * approvals.pending (subscription)
         * @description A tRPC subscription: the input goes URL-encoded as JSON in ?input=. Answers with server-sent events (httpSubscriptionLink); stored events carry ids, and a reconnect resumes after the last one (lastEventId). The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcApprovalsPending"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/conversation.events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * conversation.events (subscription)
         * @description A tRPC subscription: the input goes URL-encoded as JSON in ?input=. Answers with server-sent events (httpSubscriptionLink); stored events carry ids, and a reconnect resumes after the last one (lastEventId). The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcConversationEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/tools.list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * tools.list (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        get: operations["getTrpcToolsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/runs.list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * runs.list (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcRunsList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/runs.get": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * runs.get (query)
         * @description A tRPC query: the input goes URL-encoded as JSON in ?input=. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat or approve (or admin); without auth: anyone.
         */
        get: operations["getTrpcRunsGet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/trpc/runs.fork": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * runs.fork (mutation)
         * @description A tRPC mutation: the input is the JSON body. Answers {"result": {"data": …}}. Several procedures may be batched: /trpc/a,b?batch=1 with inputs keyed by position. The web chat speaks this face; its answers are REST's shapes.
         *
         *     **Who may call**: with auth configured: role chat (or admin); without auth: anyone.
         */
        post: operations["postTrpcRunsFork"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description A JSON-RPC 2.0 request of A2A. */
        A2aRequest: {
            /** @constant */
            jsonrpc: "2.0";
            id: string | number | null;
            /** @enum {string} */
            method: "message/send" | "message/stream" | "tasks/get" | "tasks/cancel" | "tasks/resubscribe" | "tasks/list" | "tasks/pushNotificationConfig/set" | "tasks/pushNotificationConfig/get" | "tasks/pushNotificationConfig/list" | "tasks/pushNotificationConfig/delete" | "SendMessage" | "SendStreamingMessage" | "GetTask" | "CancelTask" | "SubscribeToTask" | "ListTasks" | "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" | "ListTaskPushNotificationConfigs" | "DeleteTaskPushNotificationConfig";
            params?: {
                [key: string]: unknown;
            };
        };
        /** @description A JSON-RPC 2.0 message of MCP. */
        McpRequest: {
            /** @constant */
            jsonrpc: "2.0";
            /** @description Absent for a notification. */
            id?: string | number | null;
            /** @description initialize, tools/list, tools/call, notifications/initialized, ping, … */
            method: string;
            params?: {
                [key: string]: unknown;
            };
        };
        Readiness: {
            /** @description ready, not_ready or draining. */
            status: string;
            /** @description Not ready: what each backend said (SERVING, NOT_SERVING, UNREACHABLE, NO_ANSWER, NO_HEALTH_SERVICE). */
            backends?: {
                [key: string]: string;
            };
            /** @description Not ready or draining: which dependency is down, in words. */
            error?: string;
            /** @description Ready, but an MCP server is unavailable: which, in words (the agent answers without its tools while it is retried). */
            warning?: string;
            /** @description Ready: each configured MCP server and whether its tools are available (an optional server that is down does not make the agent unready); why one is not is in the log and GET /tools. */
            mcp_servers?: components["schemas"]["ReadyServer"][];
        };
        /** @description A configured MCP server and whether its tools can be called now; why not is in the log and GET /tools. */
        ReadyServer: {
            name: string;
            /** @enum {string} */
            status: "available" | "unavailable";
            /** @description required: true in the configuration: the agent does not start without it. */
            required: boolean;
        };
        /** @description Every refusal and failure: a message that says what was wrong. */
        Error: {
            error: string;
        };
        /** @description Who the caller is; "anonymous" with every role when auth is off. */
        Whoami: {
            /** @description The principal, as decided_by and a conversation's owner name it: "token:<name>", "jwt:<issuer>#<name>" or "anonymous". */
            principal: string;
            /** @description The name within its source (the token's name, the JWT's name claim). */
            name: string;
            roles: string[];
            /** @enum {string} */
            authentication: "on" | "off";
        };
        ToolList: {
            tools: components["schemas"]["Tool"][];
            servers?: components["schemas"]["ToolServer"][];
        };
        Tool: {
            name: string;
            description: string;
            inputSchema: {
                [key: string]: unknown;
            };
            /** @description The effective policy: true means a call stops for a human approval. */
            destructiveHint: boolean;
            server: string;
            /**
             * @description Present while the tool's MCP server is down: a call fails until it is back.
             * @constant
             */
            unavailable?: true;
        };
        /** @description A configured MCP server and whether its tools can be called now. */
        ToolServer: {
            name: string;
            /** @enum {string} */
            status: "available" | "unavailable";
            /** @description required: true in the configuration: the agent does not start without it. */
            required: boolean;
            /** @description Why it is unavailable: the command, exit code and last stderr lines, or the HTTP error. */
            error?: string;
        };
        ConversationReply: {
            conversation: components["schemas"]["Conversation"];
            result?: components["schemas"]["TurnResult"];
        };
        /** @description C */
        Conversation: {
            id: string;
            /** @description 8 lowercase hex characters; in every log line and trace about the conversation. */
            session_id: string;
            /** @enum {string} */
            status: "active" | "waiting_approval" | "completed";
            messages: components["schemas"]["Message"][];
            pending_approval?: components["schemas"]["PendingApproval"];
            pending_approvals?: components["schemas"]["PendingApproval"][];
            pipeline_state?: components["schemas"]["PipelineState"];
            /**
             * @description A turn runs now: a message sent now gets 409.
             * @constant
             */
            turn_running?: true;
            /** @description The principal that created it with authentication on: "token:<name>" or "jwt:<issuer>#<name>". Absent: created without authentication. */
            owner?: string;
            usage: components["schemas"]["Usage"];
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            updated_at: string;
        };
        /** @description M */
        Message: {
            id: string;
            /** @enum {string} */
            role: "system" | "user" | "assistant" | "tool";
            content: string;
            tool_call?: components["schemas"]["ToolCall"];
            /** @description On the first message of each model step. */
            usage?: components["schemas"]["Usage"];
            /** @description Orchestrated mode: the agent-tree node that produced it. */
            node?: string;
            /**
             * @description An assistant answer saying the turn could not go on (the model failed after its retries, or the tools).
             * @constant
             */
            is_error?: true;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            created_at: string;
            /** @description Its place in the conversation, 1-based (a run's message_seq names its user message by it). */
            seq: number;
        };
        ToolCall: {
            name: string;
            arguments: {
                [key: string]: unknown;
            };
            result?: string;
            is_error?: boolean;
            /**
             * @description A human rejected the call: nothing ran (is_error is true too).
             * @constant
             */
            rejected?: true;
            /** @description With rejected: the reason the human gave. */
            reason?: string;
        };
        /** @description Token counts of model calls. */
        Usage: {
            input_tokens: number;
            output_tokens: number;
        };
        /** @description P: a destructive call waiting for a human. */
        PendingApproval: {
            uuid: string;
            conversation_id: string;
            tool_name: string;
            tool_args: {
                [key: string]: unknown;
            };
            description: string;
            /** @description Proxy approvals (asked by an A2A sub-agent): its task. */
            remote_task_id?: string;
            remote_agent_name?: string;
            /** @description Proxy approvals: the agents the call came through, nearest first. */
            agent_chain?: string[];
            reason?: string;
            /**
             * @description Approved and started when the replica running it died; approving runs it again.
             * @constant
             */
            outcome_unknown?: true;
            replaces?: string;
            decided_by?: string;
            via?: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            expires_at?: string;
            /** @enum {string} */
            on_timeout?: "reject" | "approve";
            /** @description An approval that needs a quorum (an approval policy's `require`): how many distinct people must approve. Absent (one decision settles it) for every other approval. */
            required?: number;
            /** @description With a quorum: the role a voter must hold by name (admin does not stand in for it). */
            role?: string;
            /**
             * @description With a quorum: the requester may not vote for their own request.
             * @constant
             */
            not_requester?: true;
            /** @description With a quorum: the principal whose message led to the call. */
            requested_by?: string;
            /** @description With a quorum: the approving votes for the arguments in force, oldest first (an edit restarts them). */
            votes?: {
                /** @description The principal who voted, as decided_by names one. */
                voter: string;
                /** @description rest, web, a2a, mcp, cli. */
                via?: string;
                reason?: string;
                /**
                 * Format: date-time
                 * @example 2025-01-15T10:02:03.000Z
                 */
                at: string;
            }[];
            /**
             * Format: date-time
             * @description An approval policy's `escalate`, while pending and not escalated yet: when it escalates.
             * @example 2025-01-15T10:02:03.000Z
             */
            escalates_at?: string;
            /**
             * Format: date-time
             * @description When it escalated; from then on the votes of escalated_to count too.
             * @example 2025-01-15T10:02:03.000Z
             */
            escalated_at?: string;
            /** @description With escalated_at: the role whose votes count too. */
            escalated_to?: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            created_at: string;
        };
        /** @description S: where an agent-tree run waits. */
        PipelineState: {
            paused_node_path: number[];
            paused_node_output_key: string;
            session_state: {
                [key: string]: string;
            };
            user_message: string;
            pauses: {
                approval_uuid: string;
                paused_node_path: number[];
                paused_node_output_key: string;
                loop_iterations: {
                    [key: string]: number;
                };
            }[];
            branch_outputs: {
                [key: string]: string;
            };
        };
        /** @description R: what a turn came to. */
        TurnResult: {
            response: string;
            waiting_approval: boolean;
            approval?: components["schemas"]["PendingApproval"];
            /**
             * @description The turn could not go on (the model failed after its retries, or the tools): `response` says why.
             * @constant
             */
            is_error?: true;
        };
        /** @description The outcome is not known when the request is answered: what it asked for was, or may have been, stored, and goes on from there. Do not send it again: look where it says. */
        UnknownOutcome: {
            error: string;
            /** @constant */
            outcome: "unknown";
            /** @description The conversation to look at (GET /conversations/{id}); absent when a new conversation may not have been created. */
            conversation_id?: string;
            /** @description A decision's approval (GET /approvals/{uuid}): decided or still pending. */
            approval_uuid?: string;
        };
        ConversationList: {
            conversations: components["schemas"]["ConversationSummary"][];
            summary: {
                total: number;
                active: number;
                waiting_approval: number;
                completed: number;
            };
            /** @description Present when there is a next page: pass it back as ?cursor=. */
            next_cursor?: string;
        };
        /** @description A conversation in a list: without its messages. */
        ConversationSummary: {
            id: string;
            session_id: string;
            /** @enum {string} */
            status: "active" | "waiting_approval" | "completed";
            title: string;
            message_count: number;
            pending_approvals: number;
            pending_approval?: components["schemas"]["PendingApproval"];
            pipeline_state?: components["schemas"]["PipelineState"];
            /** @description The principal that created it with authentication on: "token:<name>" or "jwt:<issuer>#<name>". Absent: created without authentication. */
            owner?: string;
            usage: components["schemas"]["Usage"];
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            updated_at: string;
        };
        /** @description C with one page of its messages, oldest first. */
        ConversationPage: {
            conversation: components["schemas"]["Conversation"];
            has_more_before: boolean;
            has_more_after: boolean;
        };
        RunList: {
            runs: components["schemas"]["RunSummary"][];
            /** @description Present when there is a next page: pass it back as ?cursor=. */
            next_cursor?: string;
        };
        /** @description A run of a conversation (one message, or one decision, through the agent until it answers). */
        RunSummary: {
            run_id: string;
            /** @description running, waiting_approval, completed, cancelled or interrupted. */
            status: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            started_at: string;
            /** @description null while the run has not ended. */
            ended_at: string | null;
            /** @description How many steps it recorded. */
            steps: number;
            /** @description The seq of the user message that started it (maps a message of the conversation to its run); null for runs of journal format 1. */
            message_seq: number | null;
        };
        /** @description A run with every step of its journal, in order. */
        Run: {
            run_id: string;
            conversation_id: string;
            status: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            started_at: string;
            ended_at: string | null;
            /** @description The format of its steps' fields. */
            journal_version: number;
            /** @description The seq of the user message that started it; null for runs of journal format 1. */
            message_seq: number | null;
            steps: components["schemas"]["RunStep"][];
        };
        /** @description One step of a run, with the fields of its kind: model_call {model, provider, input_tokens, output_tokens, finish_reason, tool_calls?, error?}; tool_call {tool, server, arguments (secrets redacted), args_hash, outcome, summary, approval_uuid?}; approval {approval_uuid, tool, arguments, args_hash, asks}; decision {approval_uuid, approved, decided_by, via, reason?, edited_arguments?, expired?}; a2a_call {agent, message, outcome, summary}; compaction {strategy, tokens_before, tokens_after, summarized}; node_started {type}; node_finished {outcome, output_key?, exit_loop?}. */
        RunStep: {
            index: number;
            /** @description node_started, node_finished, model_call, tool_call, approval, decision, a2a_call or compaction; its own fields follow. */
            kind: string;
            /** @description The node's path in the agent tree ("pipeline/analyzer"); simple mode: the agent's name. */
            node: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            started_at: string;
            duration_ms: number;
            /** @description The seq of the conversation's last message before the step: a fork at this step (POST /runs/{run_id}/fork) copies those; null in journal format 1. */
            message_seq: number | null;
        } & {
            [key: string]: unknown;
        };
        /** @description The new conversation (C) and how it went on. */
        ForkReply: {
            conversation: components["schemas"]["Conversation"];
            result?: components["schemas"]["TurnResult"];
            /** @description True when nothing ran: the copied history ends with a complete answer and no message was given. */
            copied_only: boolean;
        };
        ApprovalList: {
            approvals: components["schemas"]["ApprovalRecord"][];
            /** @description Present when there is a next page: pass it back as ?cursor=. */
            next_cursor?: string;
        };
        /** @description A: an approval as a resource, with its whole record. */
        ApprovalRecord: {
            uuid: string;
            conversation_id: string;
            tool_name: string;
            /** @description The arguments as the model asked for them. */
            tool_args: {
                [key: string]: unknown;
            };
            description: string;
            /** @enum {string} */
            status: "pending" | "approved" | "rejected" | "expired";
            /**
             * @description Approved only: what came of the call once it started.
             * @enum {string}
             */
            execution?: "executing" | "done" | "failed" | "interrupted";
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            requested_at: string;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            decided_at?: string;
            /** @description The principal that decided: "token:<name>" (an API token), "jwt:<issuer>#<name>" (a JWT), "anonymous" without authentication; "timeout" for an expiry. Decisions stored before principals carried their source show the bare name. */
            decided_by?: string;
            /** @description rest, web, a2a, mcp, cli, timeout. */
            via?: string;
            reason?: string;
            /** @description The arguments the call ran with, when the human edited them before approving; for an approval that asked for an MCP server's input, the answer given. */
            edited_args?: {
                [key: string]: unknown;
            };
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            expires_at?: string;
            /** @enum {string} */
            on_timeout?: "reject" | "approve";
            remote_task_id?: string;
            remote_agent_name?: string;
            agent_chain?: string[];
            /** @constant */
            outcome_unknown?: true;
            replaces?: string;
            /**
             * @description GET /approvals/:uuid while pending: the approval asks for an answer to an MCP server's question; approve with "input" (POST /approvals/:uuid), or reject to decline.
             * @constant
             */
            kind?: "input";
            /** @description With kind "input": who asks, what, and the schema of the answer. */
            input_request?: {
                server: string;
                questions: string[];
                /** @description The JSON Schema the answer ("input") must fit. */
                requested_schema: {
                    [key: string]: unknown;
                };
            };
            /** @description An approval that needs a quorum (an approval policy's `require`): how many distinct people must approve. Absent (one decision settles it) for every other approval. */
            required?: number;
            /** @description With a quorum: the role a voter must hold by name (admin does not stand in for it). */
            role?: string;
            /**
             * @description With a quorum: the requester may not vote for their own request.
             * @constant
             */
            not_requester?: true;
            /** @description With a quorum: the principal whose message led to the call. */
            requested_by?: string;
            /** @description With a quorum: the approving votes for the arguments in force, oldest first (an edit restarts them). */
            votes?: {
                /** @description The principal who voted, as decided_by names one. */
                voter: string;
                /** @description rest, web, a2a, mcp, cli. */
                via?: string;
                reason?: string;
                /**
                 * Format: date-time
                 * @example 2025-01-15T10:02:03.000Z
                 */
                at: string;
            }[];
            /**
             * Format: date-time
             * @description An approval policy's `escalate`, while pending and not escalated yet: when it escalates.
             * @example 2025-01-15T10:02:03.000Z
             */
            escalates_at?: string;
            /**
             * Format: date-time
             * @description When it escalated; from then on the votes of escalated_to count too.
             * @example 2025-01-15T10:02:03.000Z
             */
            escalated_at?: string;
            /** @description With escalated_at: the role whose votes count too. */
            escalated_to?: string;
        };
        /** @description A vote that did not complete the approval's quorum: recorded, and nothing ran. */
        VoteRecorded: {
            /** @constant */
            status: "pending";
            /** @description The approving votes for the arguments in force, this one included. */
            votes: number;
            /** @description How many the quorum needs. */
            required: number;
        };
        /** @description The approval was decided (or expired) earlier: nothing ran again. */
        ApprovalConflict: {
            error: string;
            /** @enum {string} */
            decision: "approved" | "rejected" | "expired";
            approval: components["schemas"]["PendingApproval"];
        };
        AuditList: {
            entries: components["schemas"]["AuditEntry"][];
            /** @description Present when there is a next page: pass it back as ?cursor=. */
            next_cursor?: string;
        };
        /** @description E: one entry of the audit trail. */
        AuditEntry: {
            id: number;
            /**
             * Format: date-time
             * @example 2025-01-15T10:02:03.000Z
             */
            at: string;
            /** @description approval.decided, approval.expired, auth.failed, config.loaded. */
            kind: string;
            actor: string;
            via?: string;
            subject: string;
            detail: {
                [key: string]: unknown;
            };
        };
        /** @description The A2A agent card: name, description, url, version, capabilities, skills (one per tool). */
        AgentCard: {
            [key: string]: unknown;
        };
        /** @description A JSON-RPC 2.0 answer: `result`, or `error`. */
        JsonRpcResponse: {
            /** @constant */
            jsonrpc: "2.0";
            id: string | number | null;
            result?: unknown;
            error?: {
                code: number;
                message: string;
                data?: unknown;
            };
        };
        OpenAiModel: {
            id: string;
            /** @constant */
            object: "model";
            created: number;
            owned_by: string;
        };
        /** @description OpenAI's error shape. */
        OpenAiError: {
            error: {
                message: string;
                type: string;
                param: string | null;
                code: string | null;
            };
        };
        ChatCompletion: {
            id: string;
            /** @constant */
            object: "chat.completion";
            created: number;
            model: string;
            choices: ({
                index: number;
                message: {
                    /** @constant */
                    role: "assistant";
                    content: string | null;
                } & {
                    [key: string]: unknown;
                };
                finish_reason: string;
            } & {
                [key: string]: unknown;
            })[];
            /** @description The tokens of the turn's model calls, as the providers counted them. */
            usage: {
                prompt_tokens: number;
                completion_tokens: number;
                total_tokens: number;
            };
            /** @description The conversation this turn ran in (also the X-Conversation-Id header). */
            conversation_id: string;
            /** @description The approval the turn waits for (the approval resource of GET /approvals/:uuid). */
            approval?: {
                uuid: string;
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description A tRPC error: REST's status as data.httpStatus and code (BAD_REQUEST, NOT_FOUND, CONFLICT, …). */
        TrpcError: {
            error: {
                /** @description For BAD_REQUEST: each problem as `field: what was expected`; a field the input does not take is named. */
                message: string;
                /** @description The JSON-RPC code (-32600 for BAD_REQUEST). */
                code: number;
                data: {
                    /** @example BAD_REQUEST */
                    code: string;
                    httpStatus: number;
                    path?: string;
                    conflict?: unknown;
                };
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the gateway process is up */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        status: "ok";
                    };
                };
            };
        };
    };
    getReady: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ready"
                     *     }
                     */
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description a backend is not SERVING, unreachable or silent, or the gateway is draining */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "not_ready",
                     *       "backends": {
                     *         "orchestrator": "SERVING",
                     *         "conversation_store": "UNREACHABLE"
                     *       },
                     *       "error": "not ready: the conversation store cannot be reached; the log says why"
                     *     }
                     */
                    "application/json": components["schemas"]["Readiness"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the metrics */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example # TYPE asg_turns_total counter
                     *     asg_turns_total{outcome="completed"} 1
                     */
                    "text/plain": string;
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the metrics could not be collected */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOpenapiJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the OpenAPI document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    getDocsScalarJs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description JavaScript */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
            /** @description the build has no bundle (npm run build makes it) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuthWhoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the caller */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "principal": "token:alice",
                     *       "name": "alice",
                     *       "roles": [
                     *         "chat",
                     *         "approve"
                     *       ],
                     *       "authentication": "on"
                     *     }
                     */
                    "application/json": components["schemas"]["Whoami"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWellKnownOauthProtectedResource: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        resource: string;
                        resource_name: string;
                        authorization_servers: string[];
                        bearer_methods_supported: string[];
                    };
                };
            };
        };
    };
    getWellKnownOauthProtectedResourceMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        resource: string;
                        resource_name: string;
                        authorization_servers: string[];
                        bearer_methods_supported: string[];
                    };
                };
            };
        };
    };
    getTools: {
        parameters: {
            query?: never;
            header?: {
                /** @description Choose the session id (8 hex characters); anything else is ignored. */
                "X-Session-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the tool list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tools": [
                     *         {
                     *           "name": "delete_resource",
                     *           "description": "Deletes a resource by id",
                     *           "inputSchema": {
                     *             "type": "object",
                     *             "properties": {
                     *               "id": {
                     *                 "type": "string"
                     *               }
                     *             },
                     *             "required": [
                     *               "id"
                     *             ]
                     *           },
                     *           "destructiveHint": true,
                     *           "server": "resources"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ToolList"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the orchestrator or an MCP server is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description listing took longer than its deadline */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getConversations: {
        parameters: {
            query?: {
                /** @description How many per page, 1 to 500 (default 50). */
                limit?: string;
                /** @description The next_cursor of the previous page; omit it for the first. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversations": [
                     *         {
                     *           "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "session_id": "4be2a91c",
                     *           "status": "active",
                     *           "title": "Delete resource res-42",
                     *           "message_count": 5,
                     *           "pending_approvals": 0,
                     *           "usage": {
                     *             "input_tokens": 0,
                     *             "output_tokens": 0
                     *           },
                     *           "created_at": "2025-01-15T10:02:00.000Z",
                     *           "updated_at": "2025-01-15T10:02:41.000Z"
                     *         }
                     *       ],
                     *       "summary": {
                     *         "total": 120,
                     *         "active": 97,
                     *         "waiting_approval": 3,
                     *         "completed": 20
                     *       },
                     *       "next_cursor": "eyJiZWZvcmUiOiIyMDI1LTAxLTE1In0"
                     *     }
                     */
                    "application/json": components["schemas"]["ConversationList"];
                };
            };
            /** @description limit is not an integer from 1 to 500, or the cursor is not one this API gave out */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postConversations: {
        parameters: {
            query?: never;
            header?: {
                /** @description Choose the session id (8 hex characters); anything else is ignored. */
                "X-Session-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description Optional: no body, {} or a first message. */
        requestBody?: {
            content: {
                "application/json": {
                    /** @description A first message: the agent runs a turn at once. Absent or null: the conversation starts empty. */
                    message?: string | null;
                };
            };
        };
        responses: {
            /** @description created; "result" is present when a message was given */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversation": {
                     *         "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "session_id": "4be2a91c",
                     *         "status": "waiting_approval",
                     *         "messages": [
                     *           {
                     *             "id": "m1",
                     *             "role": "system",
                     *             "content": "You manage resources.",
                     *             "created_at": "2025-01-15T10:02:00.000Z",
                     *             "seq": 1
                     *           },
                     *           {
                     *             "id": "m2",
                     *             "role": "user",
                     *             "content": "Delete resource res-42",
                     *             "created_at": "2025-01-15T10:02:01.000Z",
                     *             "seq": 2
                     *           },
                     *           {
                     *             "id": "m3",
                     *             "role": "assistant",
                     *             "content": "",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               }
                     *             },
                     *             "created_at": "2025-01-15T10:02:03.000Z",
                     *             "seq": 3
                     *           }
                     *         ],
                     *         "pending_approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         },
                     *         "pending_approvals": [
                     *           {
                     *             "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *             "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *             "tool_name": "delete_resource",
                     *             "tool_args": {
                     *               "id": "res-42"
                     *             },
                     *             "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *             "created_at": "2025-01-15T10:02:03.000Z"
                     *           }
                     *         ],
                     *         "usage": {
                     *           "input_tokens": 0,
                     *           "output_tokens": 0
                     *         },
                     *         "created_at": "2025-01-15T10:02:00.000Z",
                     *         "updated_at": "2025-01-15T10:02:03.000Z"
                     *       },
                     *       "result": {
                     *         "response": "The action delete_resource needs your approval.",
                     *         "waiting_approval": true,
                     *         "approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ConversationReply"];
                };
            };
            /** @description malformed JSON, an empty or non-string "message", or a field the body does not take (named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the body is larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable and nothing was done; or, with "outcome": "unknown" and Retry-After, the replica is stopping and handed the turn to another replica, whose answer will be in the conversation named */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the outcome is not known: the turn had not finished by chat.turn_timeout, or went on from what is stored without this replica; the conversation named shows it */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnknownOutcome"];
                };
            };
        };
    };
    getConversationsId: {
        parameters: {
            query?: {
                /** @description How many messages, 1 to 1000 (default 1000). */
                limit?: string;
                /** @description Only messages before this one (a message id, exclusive). */
                before?: string;
                /** @description Only messages after this one (a message id, exclusive). */
                after?: string;
            };
            header?: never;
            path: {
                /** @description The conversation id (a UUID). */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the conversation, with one page of its messages */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversation": {
                     *         "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "session_id": "4be2a91c",
                     *         "status": "waiting_approval",
                     *         "messages": [
                     *           {
                     *             "id": "m1",
                     *             "role": "system",
                     *             "content": "You manage resources.",
                     *             "created_at": "2025-01-15T10:02:00.000Z",
                     *             "seq": 1
                     *           },
                     *           {
                     *             "id": "m2",
                     *             "role": "user",
                     *             "content": "Delete resource res-42",
                     *             "created_at": "2025-01-15T10:02:01.000Z",
                     *             "seq": 2
                     *           },
                     *           {
                     *             "id": "m3",
                     *             "role": "assistant",
                     *             "content": "",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               }
                     *             },
                     *             "created_at": "2025-01-15T10:02:03.000Z",
                     *             "seq": 3
                     *           }
                     *         ],
                     *         "pending_approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         },
                     *         "pending_approvals": [
                     *           {
                     *             "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *             "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *             "tool_name": "delete_resource",
                     *             "tool_args": {
                     *               "id": "res-42"
                     *             },
                     *             "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *             "created_at": "2025-01-15T10:02:03.000Z"
                     *           }
                     *         ],
                     *         "usage": {
                     *           "input_tokens": 0,
                     *           "output_tokens": 0
                     *         },
                     *         "created_at": "2025-01-15T10:02:00.000Z",
                     *         "updated_at": "2025-01-15T10:02:03.000Z"
                     *       },
                     *       "has_more_before": false,
                     *       "has_more_after": false
                     *     }
                     */
                    "application/json": components["schemas"]["ConversationPage"];
                };
            };
            /** @description limit is not an integer from 1 to 1000, before and after are both given, or before / after is not a message of this conversation */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no conversation has this id (or, with auth, none the caller may read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteConversationsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The conversation id (a UUID). */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no conversation has this id (or, with auth, none the caller may read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description an approved call of the conversation has no outcome yet; delete it once the call has finished */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getConversationsIdRuns: {
        parameters: {
            query?: {
                /** @description How many per page, 1 to 500 (default 50). */
                limit?: string;
                /** @description The next_cursor of the previous page; omit it for the first. */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description The conversation id (a UUID). */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one page of runs */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runs": [
                     *         {
                     *           "run_id": "0b7e3f52-9c1d-4a68-b2f0-6d4e8a1c3f95",
                     *           "status": "completed",
                     *           "started_at": "2025-01-15T10:02:05.000Z",
                     *           "ended_at": "2025-01-15T10:02:09.000Z",
                     *           "steps": 6,
                     *           "message_seq": 2
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["RunList"];
                };
            };
            /** @description limit is not an integer from 1 to 500, or the cursor is not one this API gave out */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no conversation has this id (or, with auth, none the caller may read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRunsRunId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The run id (a UUID), as GET /conversations/{id}/runs lists it. */
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the run and its steps */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "run_id": "0b7e3f52-9c1d-4a68-b2f0-6d4e8a1c3f95",
                     *       "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *       "status": "completed",
                     *       "started_at": "2025-01-15T10:02:05.000Z",
                     *       "ended_at": "2025-01-15T10:02:09.000Z",
                     *       "journal_version": 2,
                     *       "message_seq": 2,
                     *       "steps": [
                     *         {
                     *           "type": "sequential",
                     *           "index": 0,
                     *           "kind": "node_started",
                     *           "node": "pipeline",
                     *           "started_at": "2025-01-15T10:02:05.000Z",
                     *           "duration_ms": 0,
                     *           "message_seq": 2
                     *         },
                     *         {
                     *           "type": "llm",
                     *           "index": 1,
                     *           "kind": "node_started",
                     *           "node": "pipeline/analyzer",
                     *           "started_at": "2025-01-15T10:02:05.000Z",
                     *           "duration_ms": 0,
                     *           "message_seq": 2
                     *         },
                     *         {
                     *           "model": "gemini-2.5-flash",
                     *           "provider": "gemini",
                     *           "input_tokens": 412,
                     *           "output_tokens": 31,
                     *           "finish_reason": "tool-calls",
                     *           "tool_calls": [
                     *             "resources_list"
                     *           ],
                     *           "index": 2,
                     *           "kind": "model_call",
                     *           "node": "pipeline/analyzer",
                     *           "started_at": "2025-01-15T10:02:05.000Z",
                     *           "duration_ms": 812,
                     *           "message_seq": 2
                     *         },
                     *         {
                     *           "tool": "resources_list",
                     *           "server": "resources",
                     *           "arguments": {
                     *             "token": "[redacted]"
                     *           },
                     *           "args_hash": "9f2c…",
                     *           "outcome": "ok",
                     *           "summary": "[{\"id\":\"res-42\"}]",
                     *           "index": 3,
                     *           "kind": "tool_call",
                     *           "node": "pipeline/analyzer",
                     *           "started_at": "2025-01-15T10:02:06.000Z",
                     *           "duration_ms": 40,
                     *           "message_seq": 2
                     *         },
                     *         {
                     *           "model": "gemini-2.5-flash",
                     *           "provider": "gemini",
                     *           "input_tokens": 470,
                     *           "output_tokens": 18,
                     *           "finish_reason": "stop",
                     *           "index": 4,
                     *           "kind": "model_call",
                     *           "node": "pipeline/analyzer",
                     *           "started_at": "2025-01-15T10:02:06.000Z",
                     *           "duration_ms": 640,
                     *           "message_seq": 2
                     *         },
                     *         {
                     *           "outcome": "done",
                     *           "output_key": "analysis",
                     *           "index": 5,
                     *           "kind": "node_finished",
                     *           "node": "pipeline/analyzer",
                     *           "started_at": "2025-01-15T10:02:05.000Z",
                     *           "duration_ms": 1500,
                     *           "message_seq": 2
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Run"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no run has this id (or, with auth, it is of a conversation the caller may not read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postRunsRunIdFork: {
        parameters: {
            query?: never;
            header?: {
                /** @description Choose the session id (8 hex characters); anything else is ignored. */
                "X-Session-ID"?: string;
            };
            path: {
                /** @description The run id (a UUID), as GET /conversations/{id}/runs lists it. */
                run_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The step the fork goes on from, as GET /runs/:run_id numbers them; the run's step count forks after its last step. */
                    step: number;
                    /** @description Sent as the fork's next user message once the copied history is in place. Absent or null: none. */
                    message?: string | null;
                };
            };
        };
        responses: {
            /** @description forked; "result" says how the fork went on */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversation": {
                     *         "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "session_id": "4be2a91c",
                     *         "status": "waiting_approval",
                     *         "messages": [
                     *           {
                     *             "id": "m1",
                     *             "role": "system",
                     *             "content": "You manage resources.",
                     *             "created_at": "2025-01-15T10:02:00.000Z",
                     *             "seq": 1
                     *           },
                     *           {
                     *             "id": "m2",
                     *             "role": "user",
                     *             "content": "Delete resource res-42",
                     *             "created_at": "2025-01-15T10:02:01.000Z",
                     *             "seq": 2
                     *           },
                     *           {
                     *             "id": "m3",
                     *             "role": "assistant",
                     *             "content": "",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               }
                     *             },
                     *             "created_at": "2025-01-15T10:02:03.000Z",
                     *             "seq": 3
                     *           }
                     *         ],
                     *         "pending_approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         },
                     *         "pending_approvals": [
                     *           {
                     *             "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *             "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *             "tool_name": "delete_resource",
                     *             "tool_args": {
                     *               "id": "res-42"
                     *             },
                     *             "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *             "created_at": "2025-01-15T10:02:03.000Z"
                     *           }
                     *         ],
                     *         "usage": {
                     *           "input_tokens": 0,
                     *           "output_tokens": 0
                     *         },
                     *         "created_at": "2025-01-15T10:02:00.000Z",
                     *         "updated_at": "2025-01-15T10:02:03.000Z"
                     *       },
                     *       "result": {
                     *         "response": "The action delete_resource needs your approval.",
                     *         "waiting_approval": true,
                     *         "approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         }
                     *       },
                     *       "copied_only": false
                     *     }
                     */
                    "application/json": components["schemas"]["ForkReply"];
                };
            };
            /** @description malformed JSON, a missing or negative "step", an empty "message", or a field the body does not take (named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no run has this id (or, with auth, it is of a conversation the caller may not read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the step is outside the run, the run is of an agent tree, or it was recorded in journal format 1 (its steps do not record their place in the conversation) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the body is larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable and nothing was done; or, with "outcome": "unknown" and Retry-After, the replica is stopping and handed the turn to another replica, whose answer will be in the conversation named */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the fork's turn had not finished by chat.turn_timeout; the conversation named shows it */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnknownOutcome"];
                };
            };
        };
    };
    postConversationsIdMessages: {
        parameters: {
            query?: never;
            header?: {
                /** @description Choose the session id (8 hex characters); anything else is ignored. */
                "X-Session-ID"?: string;
            };
            path: {
                /** @description The conversation id (a UUID). */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description What the user says; not empty. */
                    message: string;
                };
            };
        };
        responses: {
            /** @description the turn ran (or the conversation still waits for an approval) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversation": {
                     *         "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "session_id": "4be2a91c",
                     *         "status": "waiting_approval",
                     *         "messages": [
                     *           {
                     *             "id": "m1",
                     *             "role": "system",
                     *             "content": "You manage resources.",
                     *             "created_at": "2025-01-15T10:02:00.000Z",
                     *             "seq": 1
                     *           },
                     *           {
                     *             "id": "m2",
                     *             "role": "user",
                     *             "content": "Delete resource res-42",
                     *             "created_at": "2025-01-15T10:02:01.000Z",
                     *             "seq": 2
                     *           },
                     *           {
                     *             "id": "m3",
                     *             "role": "assistant",
                     *             "content": "",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               }
                     *             },
                     *             "created_at": "2025-01-15T10:02:03.000Z",
                     *             "seq": 3
                     *           }
                     *         ],
                     *         "pending_approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         },
                     *         "pending_approvals": [
                     *           {
                     *             "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *             "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *             "tool_name": "delete_resource",
                     *             "tool_args": {
                     *               "id": "res-42"
                     *             },
                     *             "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *             "created_at": "2025-01-15T10:02:03.000Z"
                     *           }
                     *         ],
                     *         "usage": {
                     *           "input_tokens": 0,
                     *           "output_tokens": 0
                     *         },
                     *         "created_at": "2025-01-15T10:02:00.000Z",
                     *         "updated_at": "2025-01-15T10:02:03.000Z"
                     *       },
                     *       "result": {
                     *         "response": "The action delete_resource needs your approval.",
                     *         "waiting_approval": true,
                     *         "approval": {
                     *           "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "created_at": "2025-01-15T10:02:03.000Z"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ConversationReply"];
                };
            };
            /** @description malformed JSON, a missing or empty "message", or a field the body does not take (named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no conversation has this id (or, with auth, none the caller may read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a turn is running on the conversation; nothing stored */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        error: string;
                        conversation_id: string;
                    };
                };
            };
            /** @description the body is larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable and nothing was done; or, with "outcome": "unknown" and Retry-After, the replica is stopping and handed the turn to another replica, whose answer will be in the conversation named */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the outcome is not known: the turn had not finished by chat.turn_timeout, or went on from what is stored without this replica; the conversation named shows it */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnknownOutcome"];
                };
            };
        };
    };
    getConversationsIdEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @description Resume after this event id (decimal digits). */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description The conversation id (a UUID). */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example event: snapshot
                     *     data: {"conversation":{…}}
                     *
                     *     id: 17
                     *     event: message_added
                     *     data: {…}
                     */
                    "text/event-stream": string;
                };
            };
            /** @description Last-Event-ID is not an event id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no conversation has this id (or, with auth, none the caller may read) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getApprovals: {
        parameters: {
            query?: {
                /** @description How many per page, 1 to 500 (default 50). */
                limit?: string;
                /** @description The next_cursor of the previous page; omit it for the first. */
                cursor?: string;
                /** @description pending, approved, rejected, expired; several separated by commas (default: every status). */
                status?: string;
                /** @description Only the approvals of this conversation. */
                conversation_id?: string;
                /** @description true: only the pending approvals the caller may still vote for or decide (their role, not their own request under not_requester, no vote of theirs yet); a page may then hold fewer than limit. */
                needs_my_vote?: "true" | "false";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "approvals": [
                     *         {
                     *           "uuid": "9c7d2e10-4b5a-4f36-8d21-6e0a3b9c5f78",
                     *           "conversation_id": "a3d5e7f9-1b2c-4d6e-8f10-2a4c6e8b0d13",
                     *           "tool_name": "delete_resource",
                     *           "tool_args": {
                     *             "id": "res-42"
                     *           },
                     *           "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *           "status": "pending",
                     *           "requested_at": "2025-01-15T10:02:50.000Z",
                     *           "expires_at": "2025-01-15T10:32:50.000Z",
                     *           "on_timeout": "reject"
                     *         }
                     *       ],
                     *       "next_cursor": "eyJhZnRlciI6IjljN2QyZTEwIn0"
                     *     }
                     */
                    "application/json": components["schemas"]["ApprovalList"];
                };
            };
            /** @description status is not one of pending, approved, rejected, expired; limit is not an integer from 1 to 500; conversation_id or cursor is empty or the cursor is not one this API gave out */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getApprovalsUuid: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The approval uuid. */
                uuid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the approval */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *       "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *       "tool_name": "delete_resource",
                     *       "tool_args": {
                     *         "id": "res-42"
                     *       },
                     *       "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *       "status": "approved",
                     *       "execution": "done",
                     *       "requested_at": "2025-01-15T10:02:03.000Z",
                     *       "decided_at": "2025-01-15T10:02:40.000Z",
                     *       "decided_by": "token:alice",
                     *       "via": "web",
                     *       "reason": "the id was wrong",
                     *       "edited_args": {
                     *         "id": "res-43"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ApprovalRecord"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no approval has this uuid */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postApprovalsUuid: {
        parameters: {
            query?: never;
            header?: {
                /** @description Set by `asg approvals`: the decision records via "cli" (a label, not a credential). */
                "X-ASG-Via"?: "cli";
            };
            path: {
                /** @description The approval uuid. */
                uuid: string;
            };
            cookie?: never;
        };
        /** @description expected {"approved": true|false}, {"action": "approve"|"reject"} or {"answer": "yes"|"no"}, each with an optional "reason". Every form the body uses must say the same thing. */
        requestBody: {
            content: {
                "application/json": {
                    /** @description true approves, false rejects (the original form). */
                    approved?: boolean;
                    /**
                     * @description approve or reject (any case).
                     * @enum {string}
                     */
                    action?: "approve" | "reject";
                    /** @description A free answer in the A2A vocabulary: yes, y, true, approve, approved, ok, confirm approve; no, n, false, reject, rejected, deny, cancel reject (any case). */
                    answer?: boolean | string;
                    /** @description Why: stored with the decision; with a rejection it is told to the model. */
                    reason?: string;
                    /** @description Approving only: the arguments to run the call with instead of the model's; at most 32 levels of objects and arrays and 1 MiB of JSON (the limit of a stored JSON value), and checked against the tool's input schema first (400, nothing decided, when they do not fit). */
                    arguments?: {
                        [key: string]: unknown;
                    } | null;
                    /** @description Approving an approval that asks for input (an MCP server's question) only: the answer, bounded as arguments are and checked against the schema the server requested (400, nothing decided, when it does not fit). One question: the form's content; several: the contents keyed by the server's request ids. Rejecting declines the question. */
                    input?: {
                        [key: string]: unknown;
                    } | null;
                };
            };
        };
        responses: {
            /** @description decided (for an approval with a quorum: the vote that completed it, or any rejection); the reply has the turn that followed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "conversation": {
                     *         "id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "session_id": "4be2a91c",
                     *         "status": "active",
                     *         "messages": [
                     *           {
                     *             "id": "m1",
                     *             "role": "system",
                     *             "content": "You manage resources.",
                     *             "created_at": "2025-01-15T10:02:00.000Z",
                     *             "seq": 1
                     *           },
                     *           {
                     *             "id": "m2",
                     *             "role": "user",
                     *             "content": "Delete resource res-42",
                     *             "created_at": "2025-01-15T10:02:01.000Z",
                     *             "seq": 2
                     *           },
                     *           {
                     *             "id": "m3",
                     *             "role": "assistant",
                     *             "content": "",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               }
                     *             },
                     *             "created_at": "2025-01-15T10:02:03.000Z",
                     *             "seq": 3
                     *           },
                     *           {
                     *             "id": "m4",
                     *             "role": "tool",
                     *             "content": "Resource res-42 deleted",
                     *             "tool_call": {
                     *               "name": "delete_resource",
                     *               "arguments": {
                     *                 "id": "res-42"
                     *               },
                     *               "result": "Resource res-42 deleted",
                     *               "is_error": false
                     *             },
                     *             "created_at": "2025-01-15T10:02:40.000Z",
                     *             "seq": 4
                     *           },
                     *           {
                     *             "id": "m5",
                     *             "role": "assistant",
                     *             "content": "Resource res-42 has been deleted.",
                     *             "created_at": "2025-01-15T10:02:41.000Z",
                     *             "seq": 5
                     *           }
                     *         ],
                     *         "usage": {
                     *           "input_tokens": 0,
                     *           "output_tokens": 0
                     *         },
                     *         "created_at": "2025-01-15T10:02:00.000Z",
                     *         "updated_at": "2025-01-15T10:02:41.000Z"
                     *       },
                     *       "result": {
                     *         "response": "Resource res-42 has been deleted.",
                     *         "waiting_approval": false
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ConversationReply"];
                };
            };
            /** @description an approving vote of an approval with a quorum (an approval policy's require) that does not complete it: recorded, nothing ran */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "pending",
                     *       "votes": 1,
                     *       "required": 2
                     *     }
                     */
                    "application/json": components["schemas"]["VoteRecorded"];
                };
            };
            /** @description a body that says neither yes nor no (or both); a "reason" that is not a string of at most 2,000 characters; "arguments" that are not an object, come with a rejection, or do not fit the tool's input schema; "input" that is not an object, comes with a rejection, is given to an approval that asks for none, is missing when approving one that does, or does not fit the schema the server requested; or a field the body does not take (named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the caller may not decide approvals (the approve role), or, for an approval with a quorum, does not hold the quorum's role (or, once escalated, the escalation's), or asked for the call and the quorum says not_requester (audited as approval.vote_refused) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description no approval has this uuid */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description already decided, or expired; the body names the first decision and who made it. For an approval with a quorum, also a second vote of one voter for the same arguments (`{"error"}` only) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": "approval b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47 was already approved by token:alice at 2025-01-15T10:02:40.000Z",
                     *       "decision": "approved",
                     *       "approval": {
                     *         "uuid": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *         "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13",
                     *         "tool_name": "delete_resource",
                     *         "tool_args": {
                     *           "id": "res-42"
                     *         },
                     *         "description": "delete_resource on resources with arguments {\"id\":\"res-42\"}",
                     *         "decided_by": "token:alice",
                     *         "via": "web",
                     *         "created_at": "2025-01-15T10:02:03.000Z"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ApprovalConflict"] | components["schemas"]["Error"];
                };
            };
            /** @description the body is larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable and nothing was done; or, with "outcome": "unknown" and Retry-After, the replica is stopping and handed the turn to another replica, whose answer will be in the conversation named */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the outcome is not known: the decision was (or may have been) recorded, and what followed had not finished by chat.turn_timeout or went on without this replica; the approval and conversation named show it */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnknownOutcome"];
                };
            };
        };
    };
    getAudit: {
        parameters: {
            query?: {
                /** @description How many per page, 1 to 500 (default 50). */
                limit?: string;
                /** @description The next_cursor of the previous page; omit it for the first. */
                cursor?: string;
                /** @description Entry kinds (approval.decided, approval.expired, auth.failed, config.loaded, conversation.deleted); several separated by commas. */
                kind?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description one page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "entries": [
                     *         {
                     *           "id": 42,
                     *           "at": "2025-01-15T10:02:40.000Z",
                     *           "kind": "approval.decided",
                     *           "actor": "token:alice",
                     *           "via": "web",
                     *           "subject": "b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47",
                     *           "detail": {
                     *             "decision": "approved",
                     *             "reason": "the id was wrong",
                     *             "edited": true,
                     *             "conversation_id": "6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13"
                     *           }
                     *         },
                     *         {
                     *           "id": 41,
                     *           "at": "2025-01-15T10:02:02.000Z",
                     *           "kind": "auth.failed",
                     *           "actor": "",
                     *           "via": "rest",
                     *           "subject": "/approvals",
                     *           "detail": {
                     *             "cause": "unknown token"
                     *           }
                     *         }
                     *       ],
                     *       "next_cursor": "eyJiZWZvcmUiOjQxfQ"
                     *     }
                     */
                    "application/json": components["schemas"]["AuditList"];
                };
            };
            /** @description kind is not an entry kind, limit is not an integer from 1 to 500, or the cursor is not one this API gave out */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWellKnownAgentCardJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the card */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentCard"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWellKnownAgentJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the card */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentCard"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postA2a: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1.0 or 0.3; absent: the method name and parts decide. */
                "A2A-Version"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["A2aRequest"];
            };
        };
        responses: {
            /** @description a JSON-RPC answer (errors too), or for the streaming methods an event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a decision the caller's role does not allow (JSON-RPC error -32000) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
        };
    };
    getMcp: {
        parameters: {
            query?: never;
            header?: {
                /** @description 2025 revisions: the session, after initialize. */
                "Mcp-Session-Id"?: string;
                "Mcp-Protocol-Version"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a JSON-RPC answer, or an event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description not a valid MCP message, or a session header where none may be */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the session is unknown or has ended */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
        };
    };
    postMcp: {
        parameters: {
            query?: never;
            header?: {
                /** @description 2025 revisions: the session, after initialize. */
                "Mcp-Session-Id"?: string;
                "Mcp-Protocol-Version"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["McpRequest"];
            };
        };
        responses: {
            /** @description a JSON-RPC answer, or an event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description not a valid MCP message, or a session header where none may be */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the session is unknown or has ended */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
        };
    };
    deleteMcp: {
        parameters: {
            query?: never;
            header?: {
                /** @description 2025 revisions: the session, after initialize. */
                "Mcp-Session-Id"?: string;
                "Mcp-Protocol-Version"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a JSON-RPC answer, or an event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description not a valid MCP message, or a session header where none may be */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the session is unknown or has ended */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResponse"];
                };
            };
        };
    };
    getV1Models: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the list */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        object: "list";
                        data: components["schemas"]["OpenAiModel"][];
                    };
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getV1ModelsModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The agent's name. */
                model: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the model */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiModel"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not the agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiError"];
                };
            };
        };
    };
    postV1ChatCompletions: {
        parameters: {
            query?: never;
            header?: {
                /** @description The conversation to continue; wins over `user`. */
                "X-Conversation-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    model: string;
                    messages: ({
                        /** @enum {string} */
                        role: "system" | "developer" | "user" | "assistant" | "tool" | "function";
                        content?: (string | ({
                            /** @constant */
                            type: "text";
                            text: string;
                        } | ({
                            type: string;
                        } & {
                            [key: string]: unknown;
                        }))[]) | null;
                    } & {
                        [key: string]: unknown;
                    })[];
                    stream?: boolean | null;
                    stream_options?: ({
                        include_usage?: boolean;
                    } & {
                        [key: string]: unknown;
                    }) | null;
                    user?: string | null;
                    n?: 1 | null;
                    frequency_penalty?: unknown;
                    function_call?: unknown;
                    functions?: unknown;
                    logit_bias?: unknown;
                    logprobs?: unknown;
                    max_completion_tokens?: unknown;
                    max_tokens?: unknown;
                    metadata?: unknown;
                    modalities?: unknown;
                    parallel_tool_calls?: unknown;
                    prediction?: unknown;
                    presence_penalty?: unknown;
                    prompt_cache_key?: unknown;
                    reasoning_effort?: unknown;
                    response_format?: unknown;
                    safety_identifier?: unknown;
                    seed?: unknown;
                    service_tier?: unknown;
                    stop?: unknown;
                    store?: unknown;
                    temperature?: unknown;
                    tool_choice?: unknown;
                    tools?: unknown;
                    top_logprobs?: unknown;
                    top_p?: unknown;
                    verbosity?: unknown;
                    web_search_options?: unknown;
                    audio?: unknown;
                };
            };
        };
        responses: {
            /** @description the completion, or (stream: true) an event stream of chunks */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatCompletion"];
                };
            };
            /** @description a body that is not a valid request (the field is named in param) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description a model other than the agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiError"];
                };
            };
            /** @description the conversation is busy with another turn, or waits for an approval decision */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiError"];
                };
            };
            /** @description a backend service is unreachable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAiError"];
                };
            };
        };
    };
    getTrpcAuthWhoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["Whoami"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    postTrpcConversationsCreate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ConversationReply"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcConversationsList: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ConversationList"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcConversationsGet: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ConversationPage"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    postTrpcConversationsSend: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    conversationId: string;
                    message: string;
                };
            };
        };
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ConversationReply"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    postTrpcConversationsDelete: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    id: string;
                };
            };
        };
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: {
                                /** @constant */
                                deleted: true;
                            };
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcApprovalsList: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ApprovalList"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcApprovalsGet: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ApprovalRecord"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    postTrpcApprovalsResolve: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    uuid: string;
                    approved: boolean;
                    reason?: string;
                    arguments?: {
                        [key: string]: unknown;
                    };
                    input?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ConversationReply"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcApprovalsPending: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcConversationEvents: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcToolsList: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: components["schemas"]["ToolList"];
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcRunsList: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: unknown;
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    getTrpcRunsGet: {
        parameters: {
            query?: {
                /** @description The input, as JSON. */
                input?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: unknown;
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
    postTrpcRunsFork: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    runId: string;
                    step: number;
                    message?: string;
                };
            };
        };
        responses: {
            /** @description the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        result: {
                            data: unknown;
                        };
                    };
                };
            };
            /** @description BAD_REQUEST: the input does not fit (a field it does not take is named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
            /** @description auth is configured and the request has no valid bearer token (missing, unknown, malformed, forged or expired); WWW-Authenticate: Bearer says which */
            401: {
                headers: {
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description the token is valid but its roles do not allow this route (WWW-Authenticate: Bearer error="insufficient_scope") */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NOT_FOUND */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrpcError"];
                };
            };
        };
    };
}
