// `npm run generate` refuses a synced table scoped by a list that lacks one of
// docs/security-model.md step 3's recheck triggers (scripts/generate/sync-collection-checks.ts,
// app_private.list_writes_not_rechecked()): without them a member removed from the
// list while his write waited for a lock still wrote into it
// (tests/integration/sync-recipe-rechecks.test.ts). The message names the table,
// what it lacks and the statements to add. Each table is made in a transaction
// rolled back afterwards, and read as the generator reads it.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { refuseUnrecheckedListWrites } from "../../scripts/generate/sync-collection-checks.ts";
import { adminSql } from "../support/harness.ts";

const recheck = (event: "insert" | "update" | "delete", rows: string) =>
  `create trigger writer_role_rechecked_on_${event} after ${event} on public.tidesync_test_rcgen_notes referencing ${rows}
     for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id')`;

/** The generator's check after `statements` on a new synced table public.tidesync_test_rcgen_notes (all rolled back). */
async function checkWith(statements: string[]): Promise<void> {
  const rollback = new Error("rolled back on purpose");
  await adminSql.begin(async (tx) => {
    await tx.unsafe(`create table public.tidesync_test_rcgen_notes (id uuid primary key default gen_random_uuid(),
                       list_id uuid not null references public.lists (id) on delete cascade, body text not null)`);
    await tx.unsafe(`alter table public.tidesync_test_rcgen_notes enable row level security`);
    await tx.unsafe(`grant select, delete, insert (id, list_id, body), update (id, list_id, body) on public.tidesync_test_rcgen_notes to authenticated`);
    for (const statement of statements) await tx.unsafe(statement);
    await tx.unsafe(`select app_private.enable_sync('public.tidesync_test_rcgen_notes', 'list_id')`);
    await refuseUnrecheckedListWrites(tx as unknown as postgres.Sql);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
}

describe("npm run generate and a list-scoped table's recheck triggers", () => {
  it("refuses the table without them, naming it, the triggers and the statements to add", async () => {
    const refusal = checkWith([]);
    await expect(refusal).rejects.toThrow(
      /public\.tidesync_test_rcgen_notes: its writes into a list are not judged again .*\(missing: writer_role_rechecked_on_insert, writer_role_rechecked_on_update, writer_role_rechecked_on_delete\).*still writes into it/s,
    );
    await expect(refusal).rejects.toThrow(
      "  create or replace trigger writer_role_rechecked_on_update after update on public.tidesync_test_rcgen_notes referencing old table as old_rows new table as new_rows\n" +
        "    for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');",
    );
  });

  it("refuses one made with the earlier recipe (no delete trigger, an update trigger without the old rows), naming what it lacks", async () => {
    await expect(checkWith([recheck("insert", "new table as new_rows"), recheck("update", "new table as new_rows")])).rejects.toThrow(
      "(missing: writer_role_rechecked_on_delete; writer_role_rechecked_on_update references new table as new_rows, " +
        "not old table as old_rows new table as new_rows)",
    );
  });

  // They exist, so "missing" misled: what is wrong with each, and the statement that fixes it (the
  // trigger's own function and role kept).
  it("says what is wrong with a trigger that exists: without its when, enabled replica, disabled", async () => {
    const refusal = checkWith([
      recheck("insert", "new table as new_rows").replace("when (current_user = 'authenticated') ", ""),
      recheck("update", "old table as old_rows new table as new_rows").replace("'editor'", "'owner'"),
      `alter table public.tidesync_test_rcgen_notes enable replica trigger writer_role_rechecked_on_update`,
      recheck("delete", "old table as old_rows"),
      `alter table public.tidesync_test_rcgen_notes disable trigger writer_role_rechecked_on_delete`,
    ]);
    await expect(refusal).rejects.toThrow(
      "(writer_role_rechecked_on_insert has no when (current_user = 'authenticated'); " +
        "writer_role_rechecked_on_update is enabled replica, so it never fires for PostgREST or the api function; " +
        "writer_role_rechecked_on_delete is disabled)",
    );
    await expect(refusal).rejects.toThrow(
      "  create or replace trigger writer_role_rechecked_on_insert after insert on public.tidesync_test_rcgen_notes referencing new table as new_rows\n" +
        "    for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id');\n" +
        "  alter table public.tidesync_test_rcgen_notes enable trigger writer_role_rechecked_on_update;\n" +
        "  alter table public.tidesync_test_rcgen_notes enable trigger writer_role_rechecked_on_delete;",
    );
    await expect(refusal).rejects.not.toThrow(/missing/);
  });

  it("takes the table with step 3's three triggers", async () => {
    await expect(checkWith([
      recheck("insert", "new table as new_rows"),
      recheck("update", "old table as old_rows new table as new_rows"),
      recheck("delete", "old table as old_rows"),
    ])).resolves.toBeUndefined();
  });

  it("passes the migrations' own tables (tasks runs its static recheck, list_members is a membership table)", async () => {
    await expect(refuseUnrecheckedListWrites(adminSql)).resolves.toBeUndefined();
  });
});
