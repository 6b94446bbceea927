import { useCallback, useEffect, useState } from 'react';

/**
 * The open conversation lives in the URL (`#/c/<id>`), so a reload or a shared link opens
 * the same conversation. A hash needs no server routes: the app is static files.
 */
function conversationFromHash(hash: string): string | undefined {
  const match = /^#\/c\/([^/?#]+)$/.exec(hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export function useRoute(): { conversationId?: string; open(conversationId?: string): void } {
  const [conversationId, setConversationId] = useState(() => conversationFromHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setConversationId(conversationFromHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  const open = useCallback((id?: string) => {
    window.location.hash = id ? `#/c/${encodeURIComponent(id)}` : '#/';
  }, []);
  return { conversationId, open };
}
