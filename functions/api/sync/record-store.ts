// The database side of GET /v1/sync/records/{collection}/{id}: one record, read
// as the caller (deps.db.withUser: RLS decides), printed by Postgres exactly as
// a pull prints its entries (row-json.ts). The record's sync state
// (app_private.sync_records) is readable to members of the scope it is in, or
// was deleted from; its row through the table's own policies. So the answer is:
//   - a live row the caller can see in a scope they can see: the record, as a
//     full sync lists it;
//   - a tombstone (deleted within the retention window, not yet purged) of a
//     scope they can see: deleted: true, data: null, with the delete's version
//     and time, as an incremental pull lists it;
//   - anything else (an unknown id, another scope's record, a row the table's
//     policies hide, a purged tombstone): nothing, which the route answers 404.
import { allCollections } from "../../_shared/collections.ts";
import type { Tx } from "../lib/db.ts";
import { quoteLiteral, recordJsonSql, rowJsonSql } from "./row-json.ts";

const PREPARED = { prepare: true } as const;

/** Per collection: $1 the id; one row of the record's JSON text, or none. */
const RECORD_SQL = new Map(allCollections().map((c) => [
  c.name,
  `select ${recordJsonSql({
    collection: "s.collection",
    id: "s.id",
    version: "s.version",
    deleted: "s.deleted",
    data: `case when s.deleted then 'null' else ${rowJsonSql(c, "t")} end`,
    updatedAt: "s.updated_at",
  })} as record
     from app_private.sync_records s
     left join ${c.table} t on t.id = s.id and not s.deleted
    where s.collection = ${quoteLiteral(c.name)} and s.id = $1::uuid
      and (s.deleted or t.id is not null)`,
]));

/** The record `collection`/`id` as the caller may see it now, as JSON text; null when they may see none. */
export async function readRecord(tx: Tx, collection: string, id: string): Promise<string | null> {
  const sql = RECORD_SQL.get(collection);
  if (sql === undefined) throw new Error(`no collection ${collection}`);
  const [row] = await tx.unsafe<{ record: string }[]>(sql, [id], PREPARED);
  return row?.record ?? null;
}
