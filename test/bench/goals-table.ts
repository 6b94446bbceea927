import type { ColdStartResults } from './cold-start.js';
import type { BurstResults, OverheadResults } from './goal-measures.js';
import type { Summary } from './stats.js';
import { printRows } from './table.js';
import type { ThroughputResult } from './throughput.js';

/** Everything the goals table needs, from the sections of `npm run bench`. */
export interface GoalsInputs {
  mesh: Record<string, Summary>;
  get20: Summary & { errors: number };
  throughput: { one: ThroughputResult; four: ThroughputResult };
  appendRatio: number;
  burst: BurstResults;
  peers: OverheadResults | { skipped: string };
  coldStart: ColdStartResults;
}

export interface GoalRow {
  measure: string;
  /** The baseline the goal was set against (an outside probe of the earlier build on a 2-core machine). */
  today: string;
  measured: string;
  goal: string;
}

const ms = (value: number, digits = 2) => `${value.toFixed(digits)} ms`;

/** The performance goals, row for row, with this run's figures; printed and returned for the JSON. */
export function printGoalsTable(inputs: GoalsInputs): GoalRow[] {
  const { peers, burst, coldStart, throughput } = inputs;
  const get1 = inputs.mesh['GET /conversations/:id (51 messages)']!;
  const overhead = 'systems' in peers ? peers.overhead.project : undefined;
  const ratio = 'systems' in peers ? peers.ratio : undefined;
  const over = (p: 'p50' | 'p99') =>
    overhead
      ? `${ms(overhead.W1[p])} / ${ms(overhead.W2[p])}${ratio ? ` = ${ratio.W1[p].toFixed(2)}× / ${ratio.W2[p].toFixed(2)}×` : ' (Agents SDK not run)'}`
      : `not measured: ${peers.skipped}`;
  const rows: GoalRow[] = [
    { measure: 'overhead per turn W1 / W2, p50 (ratio to the Agents SDK)', today: '4.6× / 4.1×', measured: over('p50'), goal: '≤ 1.0×' },
    { measure: 'overhead per turn W1 / W2, p99 (ratio to the Agents SDK)', today: '–', measured: over('p99'), goal: '≤ 2×' },
    {
      measure: 'sequential read turns, 1 client / 4 clients (turns/s)',
      today: '52 / 91',
      measured: `${throughput.one.turnsPerSecond} / ${throughput.four.turnsPerSecond}`,
      goal: '≥ 260 / 455',
    },
    {
      measure: 'GET /conversations/:id, 51 messages, p99, 1 / 20 clients',
      today: '10.2 / 42 ms',
      measured: `${ms(get1.p99)} / ${ms(inputs.get20.p99)}`,
      goal: '< 2 / < 10 ms',
    },
    { measure: 'append cost, 10,000 vs 10 messages (p50 ratio)', today: '0.99', measured: inputs.appendRatio.toFixed(2), goal: '< 1.2' },
    {
      measure: `${burst.conversations} concurrent conversations, model after ${burst.modelDelayMs} ms: errors; wall, p50, p99; peak tree RSS`,
      today: '0; 15.4 s, 15.2 s, –; 840 MB',
      measured: `${burst.errors}; ${(burst.wallMs / 1000).toFixed(2)} s, ${(burst.latency.p50 / 1000).toFixed(2)} s, ${(burst.latency.p99 / 1000).toFixed(2)} s; ${burst.peakTreeRssMb.toFixed(0)} MB`,
      goal: '0; ≤ 2 s, ≤ 2 s; < 400 MB',
    },
    {
      measure: 'RSS of the whole tree at rest (mesh + MCP children)',
      today: '370 MB',
      measured: `${coldStart.tree_rss_mb.toFixed(0)} MB`,
      goal: '< 200 MB',
    },
    {
      measure: 'npm start to a healthy /health (asg up alone)',
      today: '4.8 s',
      measured: `${coldStart.npm_start_to_health_ms.toFixed(0)} ms (${coldStart.up_to_health_ms.toFixed(0)} ms)`,
      goal: '< 1,500 ms',
    },
    {
      measure: 'asg --help / asg config check',
      today: '1.4 s / 1.4 s',
      measured: `${coldStart.help_ms.toFixed(0)} / ${coldStart.config_check_ms.toFixed(0)} ms`,
      goal: '< 200 ms',
    },
  ];
  printRows(
    ['performance goal', 'baseline', 'this run', 'goal'],
    rows.map((row) => [row.measure, row.today, row.measured, row.goal]),
  );
  return rows;
}
