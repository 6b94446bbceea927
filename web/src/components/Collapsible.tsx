/** Arguments or output, collapsed until asked for: long tool output must not bury the chat. */
export function Collapsible({
  summary,
  text,
  open = false,
  className,
}: {
  summary: string;
  text: string;
  open?: boolean;
  className?: string;
}) {
  return (
    <details className={`collapsible ${className ?? ''}`} open={open}>
      <summary>{summary}</summary>
      <pre>{text}</pre>
    </details>
  );
}

export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
