/** An error shown where it happened, in words the gateway chose. */
export function ErrorNote({ text, onDismiss }: { text?: string; onDismiss?: () => void }) {
  if (!text) return null;
  return (
    <div className="error-note" role="alert">
      <span>{text}</span>
      {onDismiss && (
        <button type="button" className="link-button" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}
