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

describe("npm start and synced tables npm run generate has not seen", () => {
  let started: NpmStart | undefined;
  afterAll(async () => {
    await started?.stop();
  });

  it("warns, naming the table and the changed fields, to run npm run generate and restart", async () => {
    started = await startNpmStart({
      prepare: async (database) => {
        const sql = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
        try {
          await sql.unsafe(`create table public.tidesync_test_forgotten_notes (id uuid primary key default gen_random_uuid(),
                              list_id uuid not null references public.lists (id) on delete cascade, body text not null)`);
          await sql.unsafe(`alter table public.tidesync_test_forgotten_notes enable row level security`);
          await sql.unsafe(`select app_private.enable_sync('public.tidesync_test_forgotten_notes', 'list_id')`);
          for (const statement of recheckTriggers("public.tidesync_test_forgotten_notes")) await sql.unsafe(statement);
          await sql.unsafe(`alter table public.tasks drop constraint tasks_title_length,
                              add constraint tidesync_test_title_check check (char_length(title) between 1 and 100)`);
          await sql.unsafe(`alter table public.tasks alter column done drop not null`);
        } finally {
          await sql.end();
        }
      },
    });
    expect(started.output).toMatch(/WARNING: the database's synced tables differ from functions\/_shared\/sync-collections\.generated\.ts/);
    expect(started.output).toMatch(/- public\.tidesync_test_forgotten_notes \(collection tidesync_test_forgotten_notes\) is synced by the database but not by the function/);
    expect(started.output).toContain("  - public.tasks (collection tasks): field title differs (max_length 200 → 100), " +
      "field done differs (nullable false → true), constraint tasks_title_length dropped, constraint tidesync_test_title_check added\n");
    expect(started.output).toMatch(/Run `npm run generate`, then restart npm start\./);
    // Nothing else differs: the sample's other tables are as generated.
    expect(started.output.match(/^ {2}- /gm)).toHaveLength(2);
  }, 240_000);
});
