// Which rows of each synced table are the caller's in a data export
// (docs/account-export.md), derived from the table as `npm run generate` read
// it: a table made syncable needs no rule written here. A user's export is
// their personal data, the rows they created:
//   - a table with a `created_by` uuid column (GeneratedCollection.owner_column):
//     the rows whose created_by is the caller (lists, tasks); a membership
//     table synced too: the rows whose user column is the caller (list_members);
//   - a table without one: the rows whose sync state names the caller as
//     their creator (app_private.sync_records.created_by: the user whose write
//     inserted the row, or who moved it out of its creator's reach; the creator
//     the live-records quota counts).
// Rows other members wrote in a shared scope are theirs, not the caller's.
// Every query runs as the caller under RLS, so a row the caller cannot see is
// never exported whatever its rule.
import type { GeneratedCollection } from "../../_shared/sync-collection-types.ts";
import { SYNC_COLLECTIONS } from "../../_shared/sync-collections.generated.ts";
import type { Tx } from "../lib/db.ts";

/** One collection's rows that belong to `userId`, each as its JSON text (the table's columns). */
export type OwnedRowsQuery = (tx: Tx, userId: string) => ReturnType<Tx>;

export interface OwnedRowsRule {
  collection: string;
  /** What makes a row the caller's: the table's owner column, or the creator in its sync state. */
  by: { column: string } | "sync_creator";
  query: OwnedRowsQuery;
}

/** A qualified table name as the generator writes it (format('%I.%I')). */
const QUALIFIED_TABLE = /^(?:[a-z_][a-z0-9_$]*|"(?:[^"]|"")+")\.(?:[a-z_][a-z0-9_$]*|"(?:[^"]|"")+")$/;

type RuleSource = Pick<GeneratedCollection, "name" | "table" | "fields" | "owner_column">;

/** The export rule of one collection; throws when its description cannot give one. */
export function ownedRowsRule(collection: RuleSource): OwnedRowsRule {
  const { name, table, owner_column: owner } = collection;
  const refuse = (why: string) => new Error(`no export rule for the synced collection ${name}: ${why} (functions/_shared/sync-collections.generated.ts; run npm run generate)`);
  if (!QUALIFIED_TABLE.test(table)) throw refuse(`${JSON.stringify(table)} is not a qualified table name`);
  if ((owner as string | null | undefined) === undefined) throw refuse("its description has no owner_column");
  if (owner !== null) {
    const field = collection.fields.find((f) => f.name === owner);
    if (!field || field.type !== "uuid") throw refuse(`its owner column ${owner} is not a uuid column of the table`);
    return {
      collection: name,
      by: { column: owner },
      query: (tx, userId) => tx`select to_jsonb(t)::text as json from ${tx.unsafe(table)} t where t.${tx(owner)} = ${userId}`,
    };
  }
  return {
    collection: name,
    by: "sync_creator",
    query: (tx, userId) => tx`
      select to_jsonb(t)::text as json from ${tx.unsafe(table)} t
       where t.id in (select s.id from app_private.sync_records s
                       where s.collection = ${name} and s.created_by = ${userId} and not s.deleted)`,
  };
}

/**
 * The export rule of every synced collection, in order. The export route
 * calls it before the first byte: a collection without a rule answers 500,
 * never a document cut off after its headers.
 */
export function exportRules(collections: readonly RuleSource[] = SYNC_COLLECTIONS): OwnedRowsRule[] {
  return collections.map(ownedRowsRule);
}
