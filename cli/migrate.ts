import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from '../services/common/config/load.js';
import { redactSecrets } from '../services/common/secrets.js';
import { fail } from './usage.js';

/**
 * `asg migrate`: the conversation store's PostgreSQL schema brought to this build's, then exit
 * (docs/deploy.md, "Migrations"). The database is ASG_DATABASE_URL, else `store.url` of the
 * configuration. Run it with a role that owns the schema, before the store replicas of a new
 * build start: they then need DML rights only, and start without changing the schema.
 * Exit codes: 0 done (or nothing to do), 1 the database refused or could not be reached,
 * 2 nothing to migrate was named (no URL, or a store on SQLite, which migrates itself).
 */
export async function migrateCommand(options: { config?: string | undefined }, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const fromEnv = (env.ASG_DATABASE_URL ?? '').trim();
  let url = fromEnv;
  if (url === '' && options.config !== undefined) {
    if (!existsSync(options.config)) fail(`asg migrate: ${options.config} does not exist`, 2);
    try {
      url = loadConfig(options.config).store.url;
    } catch (error) {
      if (error instanceof ConfigError) fail(error.message, 2);
      throw error;
    }
  }
  if (url === '') {
    fail(
      'asg migrate: no PostgreSQL database named: set ASG_DATABASE_URL (or store.url in --config). A store on SQLite migrates its own file when it opens.',
      2,
    );
  }
  const [{ isPostgresUrl }, { migrateDatabase }] = await Promise.all([
    import('../services/conversation-store/postgres/url.js'),
    import('../services/conversation-store/postgres/migrate-database.js'),
  ]);
  if (!isPostgresUrl(url)) fail(`asg migrate: ${fromEnv ? 'ASG_DATABASE_URL' : 'store.url'} must be a postgres:// URL`, 2);
  try {
    const outcome = await migrateDatabase(url);
    process.stdout.write(
      outcome.from === outcome.to
        ? `${outcome.where} is at schema version ${outcome.to} already: nothing to do\n`
        : `${outcome.where}: schema version ${outcome.from} → ${outcome.to}\n`,
    );
  } catch (error) {
    // The URL's password was registered as a secret (redactedDatabaseUrl): no error text shows it.
    fail(redactSecrets(`asg migrate: ${error instanceof Error ? error.message : String(error)}`), 1);
  }
}
