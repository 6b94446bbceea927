/**
 * The log lines of a process's output, parsed (one JSON object per line). Lines
 * that are not JSON (a child's plain banner, a stack trace) are left out; `malformed` lists
 * them, for tests that say every line of the log is JSON.
 */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'trace';
  time: string;
  svc: string;
  msg: string;
  trace_id?: string;
  span_id?: string;
  session_id?: string;
  conversation_id?: string;
  [field: string]: unknown;
}

export function parseLogLines(output: string): { lines: LogLine[]; malformed: string[] } {
  const lines: LogLine[] = [];
  const malformed: string[] = [];
  for (const text of output.split('\n')) {
    if (text.trim() === '') continue;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && 'msg' in parsed && 'level' in parsed) lines.push(parsed as LogLine);
      else malformed.push(text);
    } catch {
      malformed.push(text);
    }
  }
  return { lines, malformed };
}

/** The parsed log lines of `output` (non-JSON lines left out). */
export function logLines(output: string): LogLine[] {
  return parseLogLines(output).lines;
}

/** One raw line parsed, or undefined when it is no JSON log line (for waitForLine predicates). */
export function asLogLine(text: string): LogLine | undefined {
  return parseLogLines(text).lines[0];
}

/** A predicate on raw lines: the line is a log line and `test` holds for it. */
export function logLineWhere(test: (line: LogLine) => boolean): (text: string) => boolean {
  return (text) => {
    const line = asLogLine(text);
    return line !== undefined && test(line);
  };
}
