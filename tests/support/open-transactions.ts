// Waiting out the transactions open right now. A pull reads below the xmin of
// its snapshot, and that xmin is the whole cluster's: any transaction open
// anywhere (another database's, a test file running in parallel) holds it
// back. After this, one drain of a cursor delivers everything committed
// before the call. Takes the connection to ask on, so the bench can use it too.
// And holding transactions open on purpose, as many writers in progress do.
import postgres from "postgres";

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

export interface OpenTransactions {
  /** The transactions' ids, oldest first. */
  txids: string[];
  /** Rolls every one of them back and closes their connections. */
  end(): Promise<void>;
}

/**
 * Opens `count` transactions on `url` that each hold a transaction id (as a writer in progress
 * does: `begin; select pg_current_xact_id()`) and keeps them open until `end()`: every
 * snapshot taken meanwhile lists them as in progress.
 */
export async function holdOpenTransactions(url: string, count: number): Promise<OpenTransactions> {
  const sql = postgres(url, { max: count, onnotice: () => {} });
  const release: (() => void)[] = [];
  const txids: Promise<string>[] = [];
  const held: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    let started!: (txid: string) => void;
    txids.push(new Promise<string>((resolve) => (started = resolve)));
    const released = new Promise<void>((resolve) => release.push(resolve));
    held.push(sql.begin(async (tx) => {
      const [row] = await tx<{ txid: string }[]>`select pg_current_xact_id()::text as txid`;
      started(row.txid);
      await released;
      throw new Error("roll back");
    }).catch(() => {}));
  }
  const ids = await Promise.all(txids);
  return {
    txids: ids.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    async end() {
      release.forEach((r) => r());
      await Promise.all(held);
      await sql.end({ timeout: 5 });
    },
  };
}
