// Does a push cost by the batch or by the size of the caller's ledger? Two
// fresh stacks (database + function server) each hold a caller; on one of
// them the caller's ledger is grown to `rows` rows of their own (one INSERT …
// SELECT into app_private.sync_ops as the owner, what months of pushes leave
// behind within the retention window). Both callers then push the same kind
// of 50-op batches, alternating sample by sample (and which goes first), so
// both sides see the machine in the same state: the ratio of the medians is
// the ledger's cost, not the drift of a shared machine between two phases
// (measured one phase after the other, the ratio ranged 0.83×–1.29× on the
// same code, docs/performance-history.md). Every batch reads the ledger for its
// op_ids (duplicate detection) and writes one row per op.
import type { BenchStack } from "./bench-stack.ts";
import { ALTERNATING_WARM_UP, alternatingMedians, now } from "./measure.ts";
import { batchBody, postBatch, taskRows } from "./push-throughput.ts";
import { untilOpenTransactionsEnd } from "../tests/support/open-transactions.ts";

export interface LedgerScaleResult {
  ledgerRows: number;
  batchOps: number;
  /** Median client wall time of one batch. */
  noneMs: number;
  withLedgerMs: number;
  ratio: number;
  /** Seconds to write the ledger rows (then vacuum analyze and a checkpoint). */
  seedSeconds: number;
}

const BATCH_OPS = 50;

export async function measurePushLedgerScale(
  noneStack: BenchStack,
  ledgerStack: BenchStack,
  config: { rows: number; samples: number },
  log: (line: string) => void,
): Promise<LedgerScaleResult> {
  const sides = await Promise.all([noneStack, ledgerStack].map(async (stack) => ({ stack, caller: await stack.createUser("ledger") })));
  log(`ledger: ${config.rows} ledger rows of the caller on one of two stacks…`);
  const t0 = now();
  const user = sides[1].caller;
  await ledgerStack.ownerSql`
    insert into app_private.sync_ops (user_id, op_id, device_id, collection, record_id, type, status, version)
    select ${user.userId}::uuid, gen_random_uuid(), ${user.deviceId}::uuid, 'tasks', gen_random_uuid(), 'upsert', 'applied', g
      from generate_series(1, ${config.rows}::integer) g`;
  await ledgerStack.ownerSql`vacuum analyze app_private.sync_ops`;
  // The bulk load's dirty pages written out now, not by the checkpointer while batches are timed.
  await ledgerStack.adminSql`checkpoint`;
  await untilOpenTransactionsEnd(ledgerStack.adminSql);
  const seedSeconds = (now() - t0) / 1000;
  log(`  → ${seedSeconds.toFixed(1)} s; ${config.samples} batches of ${BATCH_OPS} ops on each side, alternating…`);
  // Every batch new (a resent one would be a duplicate), its body built before the clock runs.
  const bodies = sides.map(({ caller }) =>
    Array.from({ length: config.samples + ALTERNATING_WARM_UP }, () => batchBody(taskRows(caller.listId, BATCH_OPS), caller.deviceId))
  );
  const [noneMs, withLedgerMs] = await alternatingMedians(config.samples, [0, 1] as [number, number], (k) =>
    postBatch(sides[k].stack.apiUrl, sides[k].caller.token, bodies[k].pop()!, BATCH_OPS));
  return { ledgerRows: config.rows, batchOps: BATCH_OPS, noneMs, withLedgerMs, ratio: withLedgerMs / noneMs, seedSeconds };
}
