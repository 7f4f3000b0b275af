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
  /** Ends every one of them (rolled back, or committed with `{ commit: true }`) and closes their connections. */
  end(options?: { commit?: boolean }): Promise<void>;
}

/**
 * Opens `count` transactions on `url` that each hold a transaction id (as a writer in progress
 * does: `begin; select pg_current_xact_id()`), after running `write` (the i-th's writes) when
 * given, and keeps them open until `end()`: every snapshot taken meanwhile lists them as in progress.
 */
export async function holdOpenTransactions(
  url: string,
  count: number,
  write?: (tx: postgres.TransactionSql, i: number) => Promise<unknown>,
): Promise<OpenTransactions> {
  const sql = postgres(url, { max: count, onnotice: () => {} });
  const release: (() => void)[] = [];
  const txids: Promise<string>[] = [];
  const held: Promise<unknown>[] = [];
  let commit = false;
  for (let i = 0; i < count; i++) {
    let started!: (txid: string) => void;
    let failed!: (error: unknown) => void;
    txids.push(new Promise<string>((resolve, reject) => ((started = resolve), (failed = reject))));
    const released = new Promise<void>((resolve) => release.push(resolve));
    held.push(sql.begin(async (tx) => {
      if (write) await write(tx, i);
      const [row] = await tx<{ txid: string }[]>`select pg_current_xact_id()::text as txid`;
      started(row.txid);
      await released;
      if (!commit) throw new Error("roll back");
    }).catch((error) => {
      failed(error);
      if (commit) throw error;
    }));
  }
  const ids = await Promise.all(txids).catch(async (error) => {
    release.forEach((r) => r());
    await Promise.allSettled(held);
    await sql.end({ timeout: 5 });
    throw error;
  });
  return {
    txids: ids.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    async end(options = {}) {
      commit = options.commit ?? false;
      release.forEach((r) => r());
      try {
        await Promise.all(held);
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}
