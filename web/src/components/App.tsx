import { useCallback, useEffect, useRef, useState } from 'react';
import type { ConversationJson } from '../api-types.js';
import { useConversation } from '../hooks/use-conversation.js';
import { useConversations } from '../hooks/use-conversations.js';
import { useApprovals } from '../hooks/use-approvals.js';
import { useRunLinks } from '../hooks/use-run-links.js';
import { useNow } from '../hooks/use-now.js';
import { usePendingApprovals } from '../hooks/use-pending-approvals.js';
import { useRoute } from '../hooks/use-route.js';
import { useWhoami, type WhoamiState } from '../hooks/use-whoami.js';
import { api, errorText } from '../trpc.js';
import { ApprovalsPage } from './ApprovalsPage.js';
import { ChatView, NewChatView } from './ChatView.js';
import { ConversationList } from './ConversationList.js';
import { PendingPanel } from './PendingPanel.js';
import { RunInspector } from './RunInspector.js';
import { RunsPage } from './RunsPage.js';
import { SignIn } from './SignIn.js';
import { whenWatched } from '../state/watch-ready.js';

/** How long a new conversation's first message waits for its live stream at most. */
const WATCH_WAIT_MS = 3_000;

/** On a phone one panel shows at a time; wider screens show all three side by side. */
type PhoneView = 'list' | 'chat' | 'pending';

/**
 * The chat once the agent knows who the user is (or checks nobody): before that, only a
 * sign-in prompt in plain words; nothing is read that would be refused.
 */
export function App() {
  const whoami = useWhoami();
  if (whoami.identity.state === 'signed-out') return <SignedOut whoami={whoami} />;
  if (whoami.identity.state === 'loading') return <div className="app-loading" aria-busy="true" />;
  return <Workspace whoami={whoami} />;
}

function SignedOut({ whoami }: { whoami: WhoamiState }) {
  return (
    <div className="app signed-out">
      <header className="topbar">
        <h1>
          <Logo /> <span className="title">Agent Stop and Go</span>
        </h1>
        <SignIn whoami={whoami} />
      </header>
      <main className="sign-in-prompt" data-testid="sign-in-prompt">
        <h2>Sign in to use this agent</h2>
        <p>
          This agent lets only people it knows see its conversations and decide its approvals. Enter the API token you were given at the top
          right (whoever runs the agent can give you one).
        </p>
      </main>
    </div>
  );
}

function Workspace({ whoami }: { whoami: WhoamiState }) {
  const { route, conversationId, open, openApprovals } = useRoute();
  const { conversations, error: listError, refresh } = useConversations();
  const { chat, loadError, live, replace } = useConversation(conversationId);
  const { pending, error: pendingError } = usePendingApprovals();
  const now = useNow();
  // The open conversation's approvals, for the decision traces under its calls: read again
  // whenever its messages or its pending approvals change (a decision changes both).
  const waitingFor = (chat.conversation?.pending_approvals ?? []).map((approval) => approval.uuid).join(',');
  const { approvals } = useApprovals(
    conversationId ? { conversationId } : undefined,
    `${chat.conversation?.messages.length ?? 0}|${waitingFor}`,
  );
  const runLinks = useRunLinks(conversationId, chat.conversation?.messages);
  const [sending, setSending] = useState<{ conversationId?: string; text: string }>();
  const [sendError, setSendError] = useState<string>();
  const [view, setView] = useState<PhoneView>('chat');
  const openId = useRef(conversationId);
  openId.current = conversationId;

  // The list shows statuses: read it again when something it shows has changed.
  const status = chat.conversation?.status;
  useEffect(() => {
    void refresh();
  }, [pending, status, refresh]);

  const openConversation = useCallback(
    (id?: string) => {
      setSendError(undefined);
      open(id);
      setView('chat');
    },
    [open],
  );

  const decided = useCallback(
    (conversation: ConversationJson) => {
      if (conversation.id === openId.current) replace(conversation);
      void refresh();
    },
    [replace, refresh],
  );

  const send = async (text: string) => {
    setSendError(undefined);
    let id = conversationId;
    setSending({ conversationId: id, text });
    try {
      if (!id) {
        // Created first and opened, so that the chat watches it while the first turn runs: the
        // message goes once the watch is up, else the first streamed words would be missed.
        id = (await api.conversations.create.mutate({})).conversation.id;
        setSending({ conversationId: id, text });
        open(id);
        await whenWatched(id, WATCH_WAIT_MS);
      }
      const reply = await api.conversations.send.mutate({ conversationId: id, message: text });
      if (reply.conversation.id === openId.current) replace(reply.conversation);
    } catch (error) {
      setSendError(errorText(error));
    } finally {
      setSending(undefined);
      void refresh();
    }
  };

  const pendingCount = pending.size;
  return (
    <div className="app" data-view={view}>
      <header className="topbar">
        <h1>
          <Logo /> <span className="title">Agent Stop and Go</span>
        </h1>
        <SignIn whoami={whoami} />
        <nav className="phone-tabs" aria-label="Views">
          <button type="button" className={view === 'list' ? 'active' : ''} onClick={() => setView('list')}>
            Chats
          </button>
          <button type="button" className={view === 'chat' ? 'active' : ''} onClick={() => setView('chat')}>
            Chat
          </button>
          <button type="button" className={view === 'pending' ? 'active' : ''} onClick={() => setView('pending')}>
            Pending{pendingCount > 0 && <span className="count waiting">{pendingCount}</span>}
          </button>
        </nav>
      </header>
      <aside className="sidebar">
        <ConversationList
          conversations={conversations}
          selectedId={conversationId ?? (route.page === 'runs' ? route.conversationId : undefined)}
          error={listError}
          onOpen={openConversation}
          onNew={() => openConversation(undefined)}
          pendingCount={pendingCount}
          approvalsOpen={route.page === 'approvals'}
          onOpenApprovals={() => {
            openApprovals();
            setView('chat');
          }}
        />
      </aside>
      <main className="chat">
        {route.page === 'approvals' ? (
          <ApprovalsPage
            status={route.status}
            pending={pending}
            now={now}
            onFilter={openApprovals}
            onOpen={openConversation}
            onDecided={decided}
          />
        ) : route.page === 'run' ? (
          <RunInspector runId={route.runId} now={now} />
        ) : route.page === 'runs' ? (
          <RunsPage conversationId={route.conversationId} now={now} />
        ) : conversationId ? (
          <ChatView
            chat={chat}
            loadError={loadError}
            live={live}
            sending={sending?.conversationId === conversationId ? sending.text : undefined}
            sendError={sendError}
            onSend={(text) => void send(text)}
            onDismissSendError={() => setSendError(undefined)}
            onDecided={decided}
            approvals={approvals}
            runLinks={runLinks}
            now={now}
          />
        ) : (
          <NewChatView
            sending={sending?.text}
            sendError={sendError}
            onSend={(text) => void send(text)}
            onDismissSendError={() => setSendError(undefined)}
          />
        )}
      </main>
      <aside className="pending">
        <PendingPanel
          pending={pending}
          error={pendingError}
          now={now}
          shownInMain={(id) => route.page === 'approvals' || id === conversationId}
          onOpen={openConversation}
          onDecided={decided}
        />
      </aside>
    </div>
  );
}

/** Stop (two bars) and go (a triangle): drawn, so it needs no font. */
function Logo() {
  return (
    <svg className="logo" viewBox="0 0 24 24" width="18" height="18" aria-hidden>
      <rect x="2" y="5" width="3.5" height="14" rx="1" />
      <rect x="7.5" y="5" width="3.5" height="14" rx="1" />
      <path d="M14 5.5v13a.8.8 0 0 0 1.2.7l7.4-6.5a.9.9 0 0 0 0-1.4l-7.4-6.5a.8.8 0 0 0-1.2.7z" />
    </svg>
  );
}
