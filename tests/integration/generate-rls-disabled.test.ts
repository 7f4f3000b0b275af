// `npm run generate` refuses a synced table whose row-level security a later
// migration disabled (scripts/generate/sync-collection-checks.ts): enable_sync
// refuses a table without it, but nothing looked again, and with it off any
// signed-in user reads every row of the table through the Data API, whatever
// its policies say. The message names the table and the statement to add.
import { describe, expect, it } from "vitest";
import { generateWithTable } from "../support/generate-test-table.ts";

const NAME = "norls_notes";
const TABLE = `public.tidesync_test_${NAME}`;

describe("npm run generate and a synced table's row-level security", () => {
  it("refuses the table once RLS is disabled after enable_sync, naming it and the statement", async () => {
    await expect(generateWithTable(NAME, { after: [`alter table ${TABLE} disable row level security`] })).rejects.toThrow(
      /public\.tidesync_test_norls_notes: row level security is disabled.*every row.*alter table public\.tidesync_test_norls_notes enable row level security/s,
    );
  });

  it("names every mistake of a table at once, each on a line of its own (not one refusal per run of generate)", async () => {
    const refusal = await generateWithTable(NAME, {
      after: [`alter table ${TABLE} disable row level security`, `revoke select on ${TABLE} from authenticated`, `grant insert (created_by) on ${TABLE} to authenticated`],
    }).catch((error: Error) => error.message);
    expect(String(refusal).split("\n").map((line) => line.slice(0, line.indexOf(",")))).toEqual([
      `${TABLE}: row level security is disabled`,
      `${TABLE}: authenticated may not read it (no SELECT privilege)`,
      `${TABLE}: authenticated may insert created_by`,
    ]);
  });

  it("takes the table with RLS enabled (and forced)", async () => {
    expect(await generateWithTable(NAME)).toContain("tidesync_test_norls_notes");
    expect(await generateWithTable(NAME, { after: [`alter table ${TABLE} force row level security`] })).toContain("tidesync_test_norls_notes");
  });
});
