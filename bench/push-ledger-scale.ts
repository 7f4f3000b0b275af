// Does a push cost by the batch or by the size of the caller's ledger? The
// same user pushes 50-op batches with an empty ledger, then with `rows` ledger
// rows of their own (one INSERT … SELECT into app_private.sync_ops as the
// owner, what months of pushes leave behind within the retention window),
// and the ratio of the median batch times is reported. Every batch reads the
// ledger for its op_ids (duplicate detection) and writes one row per op.
import type { BenchStack } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { batchBody, postBatch, taskRows } from "./push-throughput.ts";

export interface LedgerScaleResult {
  ledgerRows: number;
  batchOps: number;
  /** Median client wall time of one batch. */
  noneMs: number;
  withLedgerMs: number;
  ratio: number;
  /** Seconds to write the ledger rows (then vacuum analyze). */
  seedSeconds: number;
}

const BATCH_OPS = 50;

export async function measurePushLedgerScale(stack: BenchStack, config: { rows: number; samples: number }, log: (line: string) => void): Promise<LedgerScaleResult> {
  const user = await stack.createUser("ledger");
  const batchMs = async () => {
    const bodies = Array.from({ length: config.samples + 3 }, () => batchBody(taskRows(user.listId, BATCH_OPS), user.deviceId));
    const times: number[] = [];
    for (const [i, body] of bodies.entries()) {
      const t0 = now();
      await postBatch(stack.apiUrl, user.token, body, BATCH_OPS);
      if (i >= 3) times.push(now() - t0); // the first three warm up
    }
    return median(times);
  };
  log(`ledger: ${config.samples} batches of ${BATCH_OPS} ops with the caller's ledger (almost) empty…`);
  const noneMs = await batchMs();
  log(`ledger: ${config.rows} ledger rows of the same user…`);
  const t0 = now();
  await stack.ownerSql`
    insert into app_private.sync_ops (user_id, op_id, device_id, collection, record_id, type, status, version)
    select ${user.userId}::uuid, gen_random_uuid(), ${user.deviceId}::uuid, 'tasks', gen_random_uuid(), 'upsert', 'applied', g
      from generate_series(1, ${config.rows}::integer) g`;
  await stack.ownerSql`vacuum analyze app_private.sync_ops`;
  const seedSeconds = (now() - t0) / 1000;
  log(`  → ${seedSeconds.toFixed(1)} s; the same batches again…`);
  const withLedgerMs = await batchMs();
  return { ledgerRows: config.rows, batchOps: BATCH_OPS, noneMs, withLedgerMs, ratio: withLedgerMs / noneMs, seedSeconds };
}
