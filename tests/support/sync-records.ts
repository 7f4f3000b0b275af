// Writes sync records straight into the database the way POST /v1/sync/batch
// does (the head-lock protocol of docs/sync.md): lock and advance the user's
// sync_heads row, give each write the next change_seq, commit. Used to set up
// pull scenarios exactly (backdated tombstones, many users, many rounds).
import type postgres from "postgres";
import { adminSql } from "./harness.ts";

export interface RecordWrite {
  collection: string;
  id: string;
  /** The record's full data, or null to write a tombstone. */
  data: Record<string, unknown> | null;
  /** Server time of the write (defaults to now()); backdates tombstones for purge tests. */
  at?: Date;
}

/** Head lock + seq allocation: returns the first of `count` fresh seqs of the user. */
export async function allocateSeqs(tx: postgres.TransactionSql, userId: string, count: number): Promise<number> {
  const [head] = await tx<{ last_seq: string }[]>`
    insert into app_private.sync_heads as h (user_id, last_seq)
    values (${userId}, ${count})
    on conflict (user_id) do update set last_seq = h.last_seq + ${count}, updated_at = now()
    returning h.last_seq`;
  return Number(head.last_seq) - count + 1;
}

/** Writes a record (insert or replace) with a seq that `allocateSeqs` handed out in this transaction. */
export async function writeRecord(tx: postgres.TransactionSql, userId: string, seq: number, write: RecordWrite): Promise<void> {
  const at = write.at ?? new Date();
  const deleted = write.data === null;
  await tx`
    insert into app_private.records as r
      (user_id, collection, id, version, change_seq, data, deleted, created_at, updated_at, deleted_at)
    values (${userId}, ${write.collection}, ${write.id}, ${seq}, ${seq},
            ${deleted ? null : tx.json(write.data as postgres.JSONValue)}, ${deleted}, ${at}, ${at}, ${deleted ? at : null})
    on conflict (user_id, collection, id) do update
      set version = excluded.version, change_seq = excluded.change_seq, data = excluded.data,
          deleted = excluded.deleted, updated_at = excluded.updated_at, deleted_at = excluded.deleted_at`;
}

/** One committed transaction of writes for a user; returns the seq each write got. */
export async function writeRecords(userId: string, writes: RecordWrite[]): Promise<number[]> {
  return await adminSql.begin(async (tx) => {
    const first = await allocateSeqs(tx, userId, writes.length);
    const seqs: number[] = [];
    for (const [index, write] of writes.entries()) {
      await writeRecord(tx, userId, first + index, write);
      seqs.push(first + index);
    }
    return seqs;
  }) as number[];
}

/** The user's records as the database holds them: id → {version, deleted, data}. */
export async function databaseView(userId: string): Promise<Map<string, { version: number; deleted: boolean; data: unknown }>> {
  const rows = await adminSql<{ collection: string; id: string; version: string; deleted: boolean; data: unknown }[]>`
    select collection, id, version, deleted, data from app_private.records where user_id = ${userId}`;
  return new Map(rows.map((r) => [`${r.collection}/${r.id}`, { version: Number(r.version), deleted: r.deleted, data: r.data }]));
}
