// `npm start` after a migration that made a table syncable, without `npm run
// generate`: it warns, naming the table and saying to run `npm run generate` and
// restart, instead of starting a function that leaves the table out of GET
// /v1/meta and answers its pushes unknown_collection without a word
// (scripts/lib/generated-collections-drift.ts; its cases in
// tests/unit/generated-collections-drift.unit.test.ts).
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type NpmStart, startNpmStart } from "../support/npm-start.ts";

describe("npm start and a synced table npm run generate has not seen", () => {
  let started: NpmStart | undefined;
  afterAll(async () => {
    await started?.stop();
  });

  it("warns, naming the table, to run npm run generate and restart", async () => {
    started = await startNpmStart({
      prepare: async (database) => {
        const sql = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
        try {
          await sql.unsafe(`create table public.tidesync_test_forgotten_notes (id uuid primary key default gen_random_uuid(),
                              list_id uuid not null references public.lists (id) on delete cascade, body text not null)`);
          await sql.unsafe(`alter table public.tidesync_test_forgotten_notes enable row level security`);
          await sql.unsafe(`select app_private.enable_sync('public.tidesync_test_forgotten_notes', 'list_id')`);
        } finally {
          await sql.end();
        }
      },
    });
    expect(started.output).toMatch(/WARNING: the database's synced tables differ from functions\/_shared\/sync-collections\.generated\.ts/);
    expect(started.output).toMatch(/- public\.tidesync_test_forgotten_notes \(collection tidesync_test_forgotten_notes\) is synced by the database but not by the function/);
    expect(started.output).toMatch(/Run `npm run generate`, then restart npm start\./);
    // Nothing else differs: the sample's tables are as generated.
    expect(started.output.match(/^ {2}- /gm)).toHaveLength(1);
  }, 240_000);
});
