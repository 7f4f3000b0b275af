// The account purge as pg_cron runs it: the DO block app_private.purge_run_command()
// returns (migration 20261128004100), sent as one top-level statement of the
// simple protocol, as pg_cron sends its command, so that its COMMITs end each
// account's transaction.
import type postgres from "postgres";

/** Runs the block on `sql` (the owner's connection, as pg_cron); `now` null: the time of the run. */
export async function runPurgeBlock(sql: postgres.Sql | postgres.ReservedSql, now: Date | null = null, batch = 20): Promise<void> {
  const [{ command }] = await sql<{ command: string }[]>`select app_private.purge_run_command(${now}::timestamptz, ${batch}) as command`;
  await sql.unsafe(command).simple();
}
