// Which rows of each synced table are the caller's in a data export, written
// once per table (docs/account-export.md). Every query runs as the caller under
// RLS, so a row the caller cannot see is never exported whatever its rule;
// rows other people wrote in a shared list are theirs, not the caller's.
// A unit test fails when a synced collection has no rule here.
import type { Tx } from "../lib/db.ts";

/** One collection's rows that belong to `userId`, each as its JSON text (the table's columns). */
export type OwnedRowsQuery = (tx: Tx, userId: string) => ReturnType<Tx>;

export const OWNED_ROWS: Readonly<Record<string, OwnedRowsQuery>> = {
  // A list is the caller's when they created it. A list they only own or use
  // (another member created it; its row names that member) is listed in
  // list_memberships with its title and the caller's role instead.
  lists: (tx, userId) => tx`select to_jsonb(l)::text as json from public.lists l where l.created_by = ${userId}`,
  // A task is the caller's when they created it, in any list they can still see.
  tasks: (tx, userId) => tx`select to_jsonb(t)::text as json from public.tasks t where t.created_by = ${userId}`,
};
