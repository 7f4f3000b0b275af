// `npm start` after migrations applied without `npm run generate`: one that made
// a table syncable, one that changed a synced table's check and a column's
// nullability. It warns, naming the table, the changed fields and constraints,
// and saying to run `npm run generate` and restart, instead of starting a
// function that leaves the table out of GET /v1/meta and answers its pushes
// unknown_collection, or validates pushes by the old check (a title of 150
// characters accepted, then refused by the database), without a word
// (scripts/lib/generated-collections-drift.ts; its cases in
// tests/unit/generated-collections-drift.unit.test.ts and
// tests/integration/generated-collections-drift.test.ts).
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type NpmStart, startNpmStart } from "../support/npm-start.ts";
import { recheckTriggers } from "../support/recheck-triggers.ts";

/** `npm start` on a database `statements` ran in first (as the admin), as a developer's migrations left it. */
async function startAfter(statements: string[]): Promise<NpmStart> {
  return await startNpmStart({
    prepare: async (database) => {
      const sql = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
      try {
        for (const statement of statements) await sql.unsafe(statement);
      } finally {
        await sql.end();
      }
    },
  });
}

describe("npm start and synced tables npm run generate has not seen", () => {
  const started: NpmStart[] = [];
  afterAll(async () => {
    for (const stack of started) await stack.stop();
  });

  it("warns, naming the table and the changed fields, to run npm run generate and restart", async () => {
    const start = await startAfter([
      `create table public.tidesync_test_forgotten_notes (id uuid primary key default gen_random_uuid(),
         list_id uuid not null references public.lists (id) on delete cascade, body text not null)`,
      `alter table public.tidesync_test_forgotten_notes enable row level security`,
      `grant select on public.tidesync_test_forgotten_notes to authenticated`,
      `select app_private.enable_sync('public.tidesync_test_forgotten_notes', 'list_id')`,
      ...recheckTriggers("public.tidesync_test_forgotten_notes"),
      `alter table public.tasks drop constraint tasks_title_length,
         add constraint tidesync_test_title_check check (char_length(title) between 1 and 100)`,
      `alter table public.tasks alter column done drop not null`,
    ]);
    started.push(start);
    expect(start.output).toMatch(/WARNING: the database's synced tables differ from functions\/_shared\/sync-collections\.generated\.ts/);
    expect(start.output).toMatch(/- public\.tidesync_test_forgotten_notes \(collection tidesync_test_forgotten_notes\) is synced by the database but not by the function/);
    expect(start.output).toContain("  - public.tasks (collection tasks): field title differs (max_length 200 → 100), " +
      "field done differs (nullable false → true), constraint tasks_title_length dropped, constraint tidesync_test_title_check added\n");
    expect(start.output).toMatch(/Run `npm run generate`, then restart npm start\./);
    // Nothing else differs: the sample's other tables are as generated.
    expect(start.output.match(/^ {2}- /gm)).toHaveLength(2);
  }, 240_000);

  // What the app-developer review did to a synced table in later migrations: each is what
  // `npm run generate` refuses, with the statement that fixes it; `npm run generate` and a restart
  // alone would only meet the refusal again.
  it("warns of what npm run generate would refuse, each with its fix, and says to fix it in a migration first", async () => {
    const table = "public.tidesync_test_unsafe_notes";
    const start = await startAfter([
      `create table public.tidesync_test_unsafe_notes (id uuid primary key default gen_random_uuid(),
         list_id uuid not null references public.lists (id) on delete cascade, body text not null,
         created_by uuid default auth.uid() references auth.users (id) on delete set null)`,
      `alter table ${table} enable row level security`,
      `grant select, insert (id, list_id, body), update (id, list_id, body) on ${table} to authenticated`,
      ...recheckTriggers(table),
      `select app_private.enable_sync('${table}', 'list_id')`,
      // the later migrations
      `drop trigger writer_role_rechecked_on_delete on ${table}`,
      `alter table ${table} enable replica trigger writer_role_rechecked_on_update`,
      `alter table ${table} disable row level security`,
      `revoke select on ${table} from authenticated`,
      `grant insert (created_by) on ${table} to authenticated`,
      `alter table ${table} drop constraint tidesync_test_unsafe_notes_list_id_fkey,
         add constraint tidesync_test_unsafe_notes_list_id_fkey foreign key (list_id) references public.lists (id)`,
    ]);
    started.push(start);
    const warning = start.output.slice(start.output.indexOf("WARNING: the database's synced tables"), start.output.indexOf("Ctrl-C stops everything"));
    const entries = warning.match(/^ {2}- npm run generate would refuse the database's synced tables \(what else differs is unknown until the migration is fixed\): (.*)$/gm);
    expect(entries?.map((entry) => entry.slice(entry.indexOf("): ") + 3, entry.indexOf(",")))).toEqual([
      `${table}: its writes into a list are not judged again by the writer's role after the locks they waited for (missing: writer_role_rechecked_on_delete; ` +
        "writer_role_rechecked_on_update is enabled replica",
      `${table}: row level security is disabled`,
      `${table}: authenticated may not read it (no SELECT privilege)`,
      `${table}: its scope column list_id references public.lists (tidesync_test_unsafe_notes_list_id_fkey) on delete no action`,
      `${table}: authenticated may insert created_by`,
    ]);
    for (const fix of [
      `\n      alter table ${table} enable trigger writer_role_rechecked_on_update;\n`,
      `\n      create or replace trigger writer_role_rechecked_on_delete after delete on ${table} referencing old table as old_rows\n`,
      `alter table ${table} enable row level security`,
      `grant select on ${table} to authenticated`,
      "foreign key (list_id) references public.lists (id) on delete cascade",
      `revoke insert (created_by) on ${table} from public, authenticated`,
    ]) expect(warning).toContain(fix);
    expect(warning).not.toMatch(/Run `npm run generate`, then restart npm start/);
    expect(warning.trimEnd()).toMatch(/Fix it in a new migration with the statements shown above .*then run `npm run generate` and restart npm start \(it applies the migration\)\.$/);
  }, 240_000);
});

