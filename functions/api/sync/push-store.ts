// The SQL of POST /v1/sync/batch. One transaction per batch, run as the
// caller (deps.db.withUser), with a constant number of statements whatever the
// op count:
//   1. lock the user's sync head (insert ... on conflict do update): from here
//      until commit no other batch of this user can run, which serializes the
//      user's writers (change_seq order == commit order, see the migration);
//   2. read, in a NEW statement so its snapshot includes every batch that
//      committed while we waited for the lock: the ledger rows of the batch's
//      op_ids and the current records the ops touch;
//   (the ops are decided in memory by planBatch)
//   3. advance the head (last_seq, live_records);
//   4. write every changed record and every new ledger row in one statement.
// Ledger rows and record writes commit together or not at all, so a crash or
// timeout leaves no half-applied batch and a retry with the same op_ids is safe.
// Statements 1+2 and 3+4 are pipelined: each pair is sent at once and Postgres
// still runs them one after the other, in order, on the transaction's
// connection (so 2 still starts, with a fresh snapshot, only once 1 holds the
// lock); neither statement of a pair needs the other's result.
import type { Limits } from "../../_shared/limits.ts";
import type { ServerRecord } from "../../_shared/merge.ts";
import type { SyncBatchRequest } from "../../_shared/schemas/sync.ts";
import type { Tx } from "../lib/db.ts";
import { type BatchPlan, planBatch, recordKey, type StoredOpResult } from "./plan-batch.ts";
import { wireTimeSql as iso } from "./wire-time.ts";

// postgres.js runs unsafe() text as an unnamed statement by default: Postgres
// parses and plans it on every call, and postgres.js first spends a round trip
// describing its parameters. These texts never vary, so they are named prepared
// statements (parsed once per connection); TIDESYNC_DB_PREPARE=false still
// turns this off behind a transaction pooler. Statement 2 stays unnamed: named,
// it measured slower for 50-op batches (docs/performance.md).
const PREPARED = { prepare: true } as const;

interface HeadRow {
  last_seq: string;
  live_records: number;
  now: string;
}

async function lockHead(tx: Tx): Promise<HeadRow> {
  const [head] = await tx.unsafe<HeadRow[]>(`
    insert into app_private.sync_heads as h (user_id) values ((select auth.uid()))
    on conflict (user_id) do update set updated_at = excluded.updated_at
    returning h.last_seq::text as last_seq, h.live_records, ${iso("now()")} as now`);
  return head;
}

interface Snapshot {
  ledger: { op_id: string; result: StoredOpResult }[];
  records: ServerRecord[];
}

async function readBatchState(tx: Tx, opIds: string[], keys: { collection: string; id: string }[]): Promise<Snapshot> {
  const [row] = await tx.unsafe<Snapshot[]>(`
    select
      (select coalesce(jsonb_agg(jsonb_build_object('op_id', o.op_id, 'result', o.result)), '[]'::jsonb)
         from app_private.sync_ops o
        where o.user_id = (select auth.uid())
          -- = any(array): probes the (user_id, op_id) key per op_id; "in (select …)"
          -- was planned as a hash join over every ledger row of the user.
          and o.op_id = any (array(select jsonb_array_elements_text($1::text::jsonb)::uuid))) as ledger,
      (select coalesce(jsonb_agg(jsonb_build_object(
                'collection', r.collection, 'id', r.id, 'version', r.version, 'deleted', r.deleted,
                'data', r.data, 'field_versions', r.field_versions,
                'created_at', ${iso("r.created_at")}, 'updated_at', ${iso("r.updated_at")},
                'deleted_at', ${iso("r.deleted_at")})), '[]'::jsonb)
         from jsonb_to_recordset($2::text::jsonb) as k(collection text, id uuid)
         join app_private.records r
           on r.user_id = (select auth.uid()) and r.collection = k.collection and r.id = k.id) as records`,
    [JSON.stringify(opIds), JSON.stringify(keys)]);
  return row;
}

async function writePlan(tx: Tx, plan: BatchPlan): Promise<void> {
  const advanceHead = tx.unsafe(`
    update app_private.sync_heads
       set last_seq = $1::bigint, live_records = $2::integer, updated_at = now()
     where user_id = (select auth.uid())`, [String(plan.lastSeq), plan.liveRecords], PREPARED);
  // Statement 3 must complete its new last_seq before the records are written
  // (records_check_head refuses a version the head has not handed out): it is
  // sent first, so Postgres finishes it before it starts statement 4.
  const write = tx.unsafe(`
    with written as (
      insert into app_private.records as r
        (user_id, collection, id, version, change_seq, data, field_versions, deleted, created_at, updated_at, deleted_at)
      select (select auth.uid()), w.collection, w.id, w.version, w.version, w.data, w.field_versions, w.deleted,
             w.created_at, w.updated_at, w.deleted_at
        from jsonb_to_recordset($1::text::jsonb) as w(collection text, id uuid, version bigint, data jsonb, field_versions jsonb,
                                               deleted boolean, created_at timestamptz, updated_at timestamptz, deleted_at timestamptz)
      on conflict (user_id, collection, id) do update
        set version = excluded.version, change_seq = excluded.change_seq, data = excluded.data,
            field_versions = excluded.field_versions, deleted = excluded.deleted,
            updated_at = excluded.updated_at, deleted_at = excluded.deleted_at
      returning 1
    ), logged as (
      insert into app_private.sync_ops (user_id, op_id, device_id, collection, record_id, type, status, result, version)
      select (select auth.uid()), o.op_id, o.device_id, o.collection, o.record_id, o.type, o.status, o.result, o.version
        from jsonb_to_recordset($2::text::jsonb) as o(op_id uuid, device_id text, collection text, record_id uuid, type text,
                                               status text, result jsonb, version bigint)
      returning 1
    )
    select (select count(*) from written) as records, (select count(*) from logged) as ops`,
    [JSON.stringify(plan.writes), JSON.stringify(plan.ledgerRows)], PREPARED);
  await Promise.all([advanceHead, write]);
}

/** Applies a validated batch for the transaction's user; returns the plan it committed. */
export async function pushBatch(
  tx: Tx,
  batch: SyncBatchRequest,
  limits: Pick<Limits, "max_record_data_bytes" | "max_live_records_per_user">,
): Promise<{ plan: BatchPlan; now: string }> {
  const keys = new Map<string, { collection: string; id: string }>();
  for (const op of batch.ops) keys.set(recordKey(op.collection, op.record_id), { collection: op.collection, id: op.record_id });
  const [head, snapshot] = await Promise.all([
    lockHead(tx),
    readBatchState(tx, batch.ops.map((op) => op.op_id), [...keys.values()]),
  ]);

  const plan = planBatch(batch.ops, batch.device_id?.toLowerCase() ?? null, {
    lastSeq: Number(head.last_seq),
    liveRecords: head.live_records,
    ledger: new Map(snapshot.ledger.map((row) => [row.op_id.toLowerCase(), row.result])),
    records: new Map(snapshot.records.map((record) => [recordKey(record.collection, record.id), record])),
  }, limits, head.now);

  if (plan.ledgerRows.length > 0) await writePlan(tx, plan);
  return { plan, now: head.now };
}
