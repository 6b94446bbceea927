import type { LogFields, Logger } from '../../services/common/log.js';

/** A logger that only keeps its lines, as `<level> <message> <fields as JSON>`, for tests that count what a component said. */
export function lineLogger(lines: string[] = [], base: LogFields = {}): Logger & { lines: string[] } {
  const write =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void lines.push(`${level} ${msg} ${JSON.stringify({ ...base, ...fields })}`);
  return {
    lines,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (fields) => lineLogger(lines, { ...base, ...fields }),
  };
}
