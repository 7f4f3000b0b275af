// Waiting out the transactions open right now. A pull reads below the xmin of
// its snapshot, and that xmin is the whole cluster's: any transaction open
// anywhere (another database's, a test file running in parallel) holds it
// back. After this, one drain of a cursor delivers everything committed
// before the call. Takes the connection to ask on, so the bench can use it too.
import type postgres from "postgres";

/** Waits until every transaction open when called has ended; throws after `timeoutMs`. */
export async function untilOpenTransactionsEnd(sql: postgres.Sql, timeoutMs = 50_000): Promise<void> {
  const [{ next }] = await sql<{ next: string }[]>`select pg_snapshot_xmax(pg_current_snapshot())::text as next`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [{ passed }] = await sql<{ passed: boolean }[]>`select pg_snapshot_xmin(pg_current_snapshot()) >= ${next}::xid8 as passed`;
    if (passed) return;
    if (Date.now() > deadline) throw new Error(`a transaction older than ${next} is still open somewhere in the cluster: pulls cannot pass it`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
