import { useState, type FormEvent, type KeyboardEvent } from 'react';

/** The message box: Enter sends, Shift+Enter starts a new line. */
export function Composer({ onSend, disabledReason, busy }: { onSend(text: string): void; disabledReason?: string; busy?: boolean }) {
  const [text, setText] = useState('');
  const disabled = disabledReason !== undefined;
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const message = text.trim();
    if (!message || disabled) return;
    onSend(message);
    setText('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
  };
  return (
    <form className="composer" onSubmit={submit}>
      {disabledReason && <p className="composer-note">{disabledReason}</p>}
      <div className="composer-row">
        <textarea
          aria-label="Message"
          placeholder={busy ? 'The agent is working…' : 'Ask the agent…'}
          rows={2}
          value={text}
          disabled={disabled}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" disabled={disabled || text.trim() === ''}>
          Send
        </button>
      </div>
    </form>
  );
}
