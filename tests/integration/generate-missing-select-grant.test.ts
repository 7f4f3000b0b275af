// `npm run generate` refuses a synced table `authenticated` may not read, or
// may read only some columns of (scripts/generate/sync-collection-checks.ts):
// one pull statement reads every synced table's rows with every column
// (functions/api/sync/pull-store.ts rowDataCaseOf), and so does the push's
// first statement (push-store.ts stateSql, `t.*`), and Postgres checks SELECT
// on all of them before it runs either: without it every pull and every push
// of every collection, for every user, failed 500 INTERNAL. The message names
// the table, the columns and the grant to add.
import { describe, expect, it } from "vitest";
import { generateWithTable } from "../support/generate-test-table.ts";

const NAME = "selgrant_notes";
const TABLE = `public.tidesync_test_${NAME}`;

describe("npm run generate and a synced table's SELECT grant", () => {
  it("refuses a table without SELECT for authenticated, naming it and the grant", async () => {
    await expect(generateWithTable(NAME, { before: [`revoke select on ${TABLE} from authenticated`] })).rejects.toThrow(
      /public\.tidesync_test_selgrant_notes: authenticated may not read it \(no SELECT privilege\), so every pull and every push, of every collection and for every user, would fail 500 INTERNAL.*grant select on public\.tidesync_test_selgrant_notes to authenticated/s,
    );
  });

  it("refuses one whose SELECT was revoked by a later migration", async () => {
    await expect(generateWithTable(NAME, { after: [`revoke select on ${TABLE} from authenticated`] }))
      .rejects.toThrow(/public\.tidesync_test_selgrant_notes: authenticated may not read it/);
  });

  it("refuses a column-level SELECT that leaves columns out, naming them (the pull and the push read every column)", async () => {
    await expect(generateWithTable(NAME, {
      before: [`revoke select on ${TABLE} from authenticated`, `grant select (id, list_id, body) on ${TABLE} to authenticated`],
    })).rejects.toThrow(
      /public\.tidesync_test_selgrant_notes: authenticated may not read its column created_by \(no SELECT privilege on it\).*grant select on public\.tidesync_test_selgrant_notes to authenticated/s,
    );
  });

  it("takes the table with SELECT on the table, or on every column", async () => {
    expect(await generateWithTable(NAME)).toContain("tidesync_test_selgrant_notes");
    expect(await generateWithTable(NAME, {
      before: [`revoke select on ${TABLE} from authenticated`, `grant select (id, list_id, body, created_by) on ${TABLE} to authenticated`],
    })).toContain("tidesync_test_selgrant_notes");
  });
});
