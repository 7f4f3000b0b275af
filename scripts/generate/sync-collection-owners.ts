// What `npm run generate` records of each synced table beyond its columns:
// the column naming each row's creator (GeneratedCollection.owner_column), so
// that a data export knows which rows are the caller's without a rule written
// per table (functions/api/account/export-ownership.ts), and, for a membership
// table, the column naming the member (membership_user_column). The rule is the one
// app_private.enable_sync applies to the rows a table holds when it is made
// syncable (migration 20261126002300): a uuid column named created_by; for a
// membership table synced too (list_members), its user column: a membership
// is the member's, and has no creator (migration 20261128000300).
import type postgres from "postgres";

/** Collection → its created_by column, for the synced tables that have one and are no membership tables. */
export async function readOwnerColumns(sql: postgres.Sql): Promise<Map<string, string>> {
  const rows = await sql<{ collection: string; column: string }[]>`
    select t.collection, a.attname::text as column
      from app_private.sync_tables t
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
     where a.attname = 'created_by' and a.atttypid = 'uuid'::regtype
       and not exists (select 1 from app_private.sync_memberships m where m.relation = t.relation)`;
  return new Map(rows.map((r) => [r.collection, r.column]));
}

/** Collection → the column naming the member, for the synced tables that are membership tables too. */
export async function readMembershipColumns(sql: postgres.Sql): Promise<Map<string, string>> {
  const rows = await sql<{ collection: string; column: string }[]>`
    select t.collection, m.user_column::text as column
      from app_private.sync_tables t
      join app_private.sync_memberships m on m.relation = t.relation`;
  return new Map(rows.map((r) => [r.collection, r.column]));
}
