// Direct SQL on the synced tables (public.lists, public.tasks) to set up and
// check sync scenarios: writes as a user the way PostgREST runs them (role
// `authenticated` + claims: the policies and the sync triggers apply, as for
// any app write), and reads of what the database holds as the superuser
// (a row, its sync state, the ledger), for assertions.
import type postgres from "postgres";
import { adminSql, type TestUser } from "./harness.ts";
import { asUser } from "./shared-lists.ts";

export type Collection = "lists" | "tasks";

export interface RowWrite {
  collection: Collection;
  id: string;
  /** Columns to set (insert, or update of an existing row), or null to delete the row. */
  data: Record<string, unknown> | null;
}

const table = (collection: Collection) => `public.${collection}`;

async function writeRow(tx: postgres.TransactionSql, write: RowWrite): Promise<void> {
  if (write.data === null) {
    await tx`delete from ${tx.unsafe(table(write.collection))} where id = ${write.id}`;
    return;
  }
  // .update(), or .insert() when there is no such row (an upsert would also need the new
  // list to pass the read policy before the trigger has made its creator a member).
  const data = write.data as Record<string, postgres.SerializableParameter>;
  const updated = await tx`update ${tx.unsafe(table(write.collection))} set ${tx(data)} where id = ${write.id} returning id`;
  if (updated.length === 0) await tx`insert into ${tx.unsafe(table(write.collection))} ${tx({ id: write.id, ...data })}`;
}

/** One committed transaction of direct writes as `user`; returns the version each row has afterwards. */
export async function writeRows(user: TestUser, writes: RowWrite[]): Promise<number[]> {
  await asUser(user, async (tx) => {
    for (const write of writes) await writeRow(tx, write);
  });
  return await Promise.all(writes.map(async (w) => (await syncState(w.collection, w.id))!.version));
}

export interface SyncState {
  version: number;
  deleted: boolean;
  scope_id: string;
  field_versions: Record<string, { v: number; d: string | null }>;
}

/** The sync bookkeeping of a row (app_private.sync_records), read past RLS. */
export async function syncState(collection: string, id: string): Promise<SyncState | undefined> {
  const [row] = await adminSql<(SyncState & { version: string })[]>`
    select version::text, deleted, scope_id::text, field_versions
      from app_private.sync_records where collection = ${collection} and id = ${id}`;
  return row ? { ...row, version: Number(row.version) } : undefined;
}

/** The row of a synced table (its columns except id), read past RLS; undefined when there is none. */
export async function storedRow(collection: Collection, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await adminSql<{ data: Record<string, unknown> }[]>`
    select to_jsonb(t) - 'id' as data from ${adminSql.unsafe(table(collection))} t where t.id = ${id}`;
  return row?.data;
}

/** How many bookkeeping rows (sync_records, sync_changes) mention the id. */
export async function bookkeepingRows(id: string): Promise<{ records: number; changes: number }> {
  const [row] = await adminSql<{ records: number; changes: number }[]>`
    select (select count(*)::int from app_private.sync_records where id = ${id}) as records,
           (select count(*)::int from app_private.sync_changes where id = ${id}) as changes`;
  return row;
}

export interface LedgerRow {
  op_id: string;
  device_id: string | null;
  collection: string | null;
  record_id: string | null;
  type: string | null;
  status: string;
  version: number | null;
  error: Record<string, unknown> | null;
  error_bytes: number | null;
}

/** The user's op ledger (app_private.sync_ops). */
export async function ledger(userId: string): Promise<LedgerRow[]> {
  const rows = await adminSql<(LedgerRow & { version: string | null })[]>`
    select op_id::text, device_id::text, collection, record_id::text, type, status, version::text, error,
           octet_length(error::text) as error_bytes
      from app_private.sync_ops where user_id = ${userId} order by created_at, op_id`;
  return rows.map((r) => ({ ...r, version: r.version === null ? null : Number(r.version) }));
}

/** The live records the user created (the quota's count, app_private.sync_usage). */
export async function liveRecords(userId: string): Promise<number> {
  const [row] = await adminSql<{ live_records: number }[]>`select live_records from app_private.sync_usage where user_id = ${userId}`;
  return row?.live_records ?? 0;
}

/**
 * Runs `work` while the database refuses the user's ledger inserts: a crash
 * after a push wrote its rows, before it commits (the batch must roll back whole).
 */
export async function withFailingLedger<T>(userId: string, work: () => Promise<T>): Promise<T> {
  const suffix = userId.replaceAll("-", "");
  const fn = `app_private.tidesync_test_fail_ledger_${suffix}`;
  await adminSql.unsafe(`
    create function app_private.tidesync_test_fail_ledger_${suffix}() returns trigger language plpgsql set search_path = '' as $$
    begin
      if new.user_id = '${userId}'::uuid then
        raise exception 'simulated crash';
      end if;
      return new;
    end $$;
    create trigger test_fail_ledger_${suffix} before insert on app_private.sync_ops for each row execute function ${fn}();`);
  try {
    return await work();
  } finally {
    await adminSql.unsafe(`drop trigger test_fail_ledger_${suffix} on app_private.sync_ops; drop function ${fn}();`);
  }
}
