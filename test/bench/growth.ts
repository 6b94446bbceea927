/**
 * How the store grows: bytes stored per read turn and per approval turn on each driver (a real mesh, `bin/asg up`,
 * driven over HTTP; the database's size before and after, SQLite's file and WAL checkpointed, PostgreSQL's
 * pg_database_size), and the SQLite file after 10,000 turns spread over 30 days with the default retention (events.keep
 * 7 days, conversations kept; the lifecycle sweep every simulated hour) against the same turns without pruning.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createLogger } from '../../services/common/log.js';
import { DATABASE_FILE, openSqliteStorage } from '../../services/conversation-store/sqlite/driver.js';
import { LifecycleSweep } from '../../services/orchestrator/lifecycle-sweep.js';
import { startAgent, tempDir } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceAgentScript, type ScriptedModelServer, startScriptedModel } from '../support/scripted-model.js';
import { serveStore } from '../support/served-store.js';
import { conversationWithTurns } from '../support/store-turns.js';
import { createBenchDatabase } from './bench-database.js';
import { undoOnInterrupt } from './interrupt.js';
import { printRows } from './table.js';

const TURNS_MEASURED = 200;
const HISTORY_TURNS = 10_000;
const HISTORY_DAYS = 30;
const TURNS_PER_CONVERSATION = 10;
const DAY_MS = 24 * 3_600_000;
const DEFAULT_EVENTS_KEEP_MS = 7 * DAY_MS;

export interface GrowthMeasurement {
  driver: 'SQLite' | 'PostgreSQL';
  bytesPerReadTurn: number;
  bytesPerApprovalTurn: number;
}

export interface HistoryMeasurement {
  turns: number;
  days: number;
  bytesWithDefaultRetention: number;
  bytesWithoutPruning: number;
}

/** The SQLite file of `dataDir` with its WAL checkpointed into it. */
function sqliteBytes(dataDir: string): number {
  const file = join(dataDir, DATABASE_FILE);
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return statSync(file).size;
}

async function postgresBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A CHECKPOINT first would need superuser; the size counts the relations' files, which grow as rows are written.
    const { rows } = await client.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size');
    return Number(rows[0]!.size);
  } finally {
    await client.end();
  }
}

/** Bytes per turn of each kind on one mesh: `count` turns of each, the database's size before and after. */
async function perTurn(model: ScriptedModelServer, driver: GrowthMeasurement['driver']): Promise<GrowthMeasurement> {
  const database = driver === 'PostgreSQL' ? await createBenchDatabase() : undefined;
  try {
    const agent = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      ...(database ? { env: { ASG_DATABASE_URL: database.url } } : {}),
    });
    const stop = undoOnInterrupt(() => agent.stop());
    try {
      const size = () => (database ? postgresBytes(database.url) : Promise.resolve(sqliteBytes(agent.dataDir)));
      let id = '';
      const readTurns = async () => {
        for (let index = 0; index < TURNS_MEASURED; index += 1) {
          if (index % TURNS_PER_CONVERSATION === 0) id = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
          await post(`${agent.url}/conversations/${id}/messages`, { message: 'list resources' });
        }
      };
      const approvalTurns = async () => {
        for (let index = 0; index < TURNS_MEASURED; index += 1) {
          if (index % TURNS_PER_CONVERSATION === 0) id = (await post(`${agent.url}/conversations`, {})).body.conversation.id;
          const stopped = await post(`${agent.url}/conversations/${id}/messages`, { message: `add resource growth-${index} with value 1` });
          await post(`${agent.url}/approvals/${stopped.body.result.approval.uuid}`, { approved: true });
        }
      };
      const before = await size();
      await readTurns();
      const afterReads = await size();
      await approvalTurns();
      const afterApprovals = await size();
      return {
        driver,
        bytesPerReadTurn: Math.round((afterReads - before) / TURNS_MEASURED),
        bytesPerApprovalTurn: Math.round((afterApprovals - afterReads) / TURNS_MEASURED),
      };
    } finally {
      await stop();
    }
  } finally {
    await database?.drop();
  }
}

/** 10,000 turns over 30 simulated days on a SQLite store of the bench's clock; swept every simulated hour, or never. */
async function history(pruned: boolean): Promise<number> {
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  const dataDir = tempDir('asg-bench-growth-');
  const served = await serveStore(openSqliteStorage({ dataDir, now: () => clock }), 'growth-bench');
  const stop = undoOnInterrupt(() => served.stop());
  try {
    const sweep = new LifecycleSweep(
      { store: served.client },
      {
        intervalMs: 60_000,
        conversationsIdleMs: undefined,
        auditKeepMs: undefined,
        eventsKeepMs: DEFAULT_EVENTS_KEEP_MS,
        runsKeepMs: undefined,
        holder: { owner: 'growth-bench', node: 'bench' },
      },
      createLogger('growth-bench'),
    );
    const conversations = HISTORY_TURNS / TURNS_PER_CONVERSATION;
    const stepMs = (HISTORY_DAYS * DAY_MS) / conversations;
    let sweptAt = clock;
    for (let index = 0; index < conversations; index += 1) {
      await conversationWithTurns(served.storage, TURNS_PER_CONVERSATION);
      clock += stepMs;
      if (pruned && clock - sweptAt >= 3_600_000) {
        sweptAt = clock;
        await sweep.sweep();
      }
    }
    return sqliteBytes(dataDir);
  } finally {
    await stop();
  }
}

export async function growthBenchmarks(options: {
  postgres: boolean;
}): Promise<{ perTurn: GrowthMeasurement[]; history: HistoryMeasurement }> {
  const model = await startScriptedModel(resourceAgentScript);
  try {
    const measured: GrowthMeasurement[] = [await perTurn(model, 'SQLite')];
    if (options.postgres) measured.push(await perTurn(model, 'PostgreSQL'));
    const withRetention = await history(true);
    const withoutPruning = await history(false);
    return {
      perTurn: measured,
      history: { turns: HISTORY_TURNS, days: HISTORY_DAYS, bytesWithDefaultRetention: withRetention, bytesWithoutPruning: withoutPruning },
    };
  } finally {
    await model.close();
  }
}

export function printGrowthTable(growth: { perTurn: GrowthMeasurement[]; history: HistoryMeasurement }): void {
  printRows(
    ['driver', 'bytes per read turn', 'bytes per approval turn'],
    growth.perTurn.map((row) => [row.driver, String(row.bytesPerReadTurn), String(row.bytesPerApprovalTurn)]),
  );
  const { turns, days, bytesWithDefaultRetention, bytesWithoutPruning } = growth.history;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `SQLite after ${turns.toLocaleString('en')} read turns over ${days} days: ${mb(bytesWithDefaultRetention)} with the default retention (events.keep 7d), ${mb(bytesWithoutPruning)} without pruning`,
  );
}
