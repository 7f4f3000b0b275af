// What `npm start` warns of, read from a database (scripts/lib/generated-collections-drift.ts):
// the synced tables as `npm run generate` reads them (readSyncCollections) against those the
// function was generated with. A migration that changes a synced column's check, nullability,
// default or privileges without `npm run generate` leaves the function validating pushes by the
// old shape; the warning names the collection, the field and what changed. A database the
// generator would refuse gets its refusal, and one the role may not read no warning (as before).
// Here the function's collections are what the generator read before the change; each table is
// made in a transaction rolled back afterwards. (npm start itself: npm-start-generated-drift.test.ts.)
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { databaseCollectionsDrift } from "../../scripts/lib/generated-collections-drift.ts";
import { adminSql } from "../support/harness.ts";
import { recheckTriggers } from "../support/recheck-triggers.ts";

const TABLE = "public.tidesync_test_drift_notes";

/** The drift after `migration` of a synced table the function was generated with just before it (all rolled back). */
async function driftAfter(migration: string[]): Promise<string[] | undefined> {
  const rollback = new Error("rolled back on purpose");
  let drift: string[] | undefined;
  await adminSql.begin(async (tx) => {
    const sql = tx as unknown as postgres.Sql;
    await tx.unsafe(`create table public.tidesync_test_drift_notes (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade,
                       body text not null constraint tidesync_test_drift_notes_body_length check (char_length(body) <= 200),
                       priority text not null default 'low')`);
    await tx.unsafe(`alter table ${TABLE} enable row level security`);
    await tx.unsafe(`grant select, insert (id, list_id, body, priority), update (id, list_id, body, priority) on ${TABLE} to authenticated`);
    await tx.unsafe(`select app_private.enable_sync('${TABLE}', 'list_id')`);
    for (const statement of recheckTriggers(TABLE)) await tx.unsafe(statement);
    const generated = await readSyncCollections(sql);
    for (const statement of migration) await tx.unsafe(statement);
    drift = await databaseCollectionsDrift(sql, generated);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return drift;
}

describe("npm start's warning, read from the database as npm run generate reads it", () => {
  it("nothing when the table is as generated", async () => {
    expect(await driftAfter([])).toEqual([]);
  });

  it("a check, a nullability, a default and a column privilege changed: the collection, each field and the constraint named", async () => {
    expect(await driftAfter([
      `alter table ${TABLE} drop constraint tidesync_test_drift_notes_body_length,
         add constraint tidesync_test_drift_notes_body_check check (char_length(body) between 1 and 100)`,
      `alter table ${TABLE} alter column priority drop default, alter column priority drop not null`,
      `revoke update (priority) on ${TABLE} from authenticated`,
    ])).toEqual([
      `${TABLE} (collection tidesync_test_drift_notes): field body differs (min_length none → 1, max_length 200 → 100), ` +
        "field priority differs (nullable false → true, has_default true → false, updatable true → false), " +
        "constraint tidesync_test_drift_notes_body_check added, constraint tidesync_test_drift_notes_body_length dropped",
    ]);
  });

  it("a column's type changed to an enum: its type and labels", async () => {
    expect(await driftAfter([
      `create type public.tidesync_test_drift_priority as enum ('low', 'high')`,
      `alter table ${TABLE} alter column priority drop default, alter column priority type public.tidesync_test_drift_priority using priority::public.tidesync_test_drift_priority`,
    ])).toEqual([
      `${TABLE} (collection tidesync_test_drift_notes): field priority differs (type "text" → "tidesync_test_drift_priority", ` +
        `category "S" → "E", has_default true → false, enum_values none → ["low","high"])`,
    ]);
  });

  it("a grant npm run generate refuses: what it would refuse, not silence", async () => {
    const drift = await driftAfter([`revoke insert (id) on ${TABLE} from authenticated`]);
    expect(drift).toHaveLength(1);
    expect(drift![0]).toMatch(
      /^npm run generate would refuse the database's synced tables .*: public\.tidesync_test_drift_notes: authenticated may insert rows but not choose their id/,
    );
  });

  // A later migration that makes a synced table unsafe: what generate refuses (the same check), each
  // entry with the statement that fixes it.
  it.each([
    ["SELECT revoked", [`revoke select on ${TABLE} from authenticated`],
      /: public\.tidesync_test_drift_notes: authenticated may not read it .*grant select on public\.tidesync_test_drift_notes to authenticated/s],
    ["row level security disabled", [`alter table ${TABLE} disable row level security`],
      /: public\.tidesync_test_drift_notes: row level security is disabled.*alter table public\.tidesync_test_drift_notes enable row level security/s],
    ["created_by added insertable", [`alter table ${TABLE} add column created_by uuid default auth.uid()`, `grant insert (created_by) on ${TABLE} to authenticated`],
      /: public\.tidesync_test_drift_notes: authenticated may insert created_by.*revoke insert \(created_by\) on public\.tidesync_test_drift_notes from public, authenticated/s],
    ["the scope key's cascade dropped", [`alter table ${TABLE} drop constraint tidesync_test_drift_notes_list_id_fkey,
       add constraint tidesync_test_drift_notes_list_id_fkey foreign key (list_id) references public.lists (id)`],
      /: public\.tidesync_test_drift_notes: its scope column list_id references public\.lists \(tidesync_test_drift_notes_list_id_fkey\) on delete no action.*on delete cascade/s],
  ])("%s: generate's refusal, naming the table and the statement that fixes it", async (_, migration, refusal) => {
    const drift = await driftAfter(migration);
    expect(drift).toHaveLength(1);
    expect(drift![0]).toMatch(/^npm run generate would refuse the database's synced tables /);
    expect(drift![0]).toMatch(refusal);
  });

  // Dropping or disabling one changes no collection, yet a member removed while his write waited
  // for a lock then writes into the list.
  it("a step 3 recheck trigger dropped or disabled: generate's refusal, naming the table, the trigger, what is wrong and the fix", async () => {
    for (const [migration, wrong, fix] of [
      [`drop trigger writer_role_rechecked_on_update on ${TABLE}`, "(missing: writer_role_rechecked_on_update)",
        `\n      create or replace trigger writer_role_rechecked_on_update after update on ${TABLE} referencing old table as old_rows new table as new_rows\n`],
      [`alter table ${TABLE} disable trigger writer_role_rechecked_on_update`, "(writer_role_rechecked_on_update is disabled)",
        `\n      alter table ${TABLE} enable trigger writer_role_rechecked_on_update;`],
    ]) {
      const drift = await driftAfter([migration]);
      expect(drift).toHaveLength(1);
      expect(drift![0]).toMatch(
        /^npm run generate would refuse the database's synced tables .*: public\.tidesync_test_drift_notes: its writes into a list are not judged again /,
      );
      expect(drift![0]).toContain(wrong);
      // The statement that fixes it, under the same entry (npm start prints an entry as one bullet).
      expect(drift![0]).toContain(fix);
    }
  });

  it("a role that may not read the catalog of synced tables: no warning", async () => {
    expect(await driftAfter([`set local role anon`])).toBeUndefined();
  });
});
