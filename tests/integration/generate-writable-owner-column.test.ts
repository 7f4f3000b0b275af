// `npm run generate` refuses a synced table whose owner column (created_by:
// GeneratedCollection.owner_column) `authenticated` may insert or update
// (scripts/generate/sync-collection-checks.ts): a user could then write rows
// naming another user as their creator, and those rows would be in that
// user's data export (docs/account-export.md) and count in their quota. The
// usual way there: no `revoke all` before the column grants, so Supabase's
// default privileges (everything on a new public table, to anon,
// authenticated and service_role) stay. The message names the table, the
// column and the statements that fix it.
import { describe, expect, it } from "vitest";
import { generateWithTable } from "../support/generate-test-table.ts";

const NAME = "owner_notes";
const TABLE = `public.tidesync_test_${NAME}`;

describe("npm run generate and a synced table's created_by", () => {
  it("refuses the table a grant of everything leaves writable (no revoke all), naming the revoke and the grants to keep", async () => {
    const refusal = generateWithTable(NAME, { before: [`grant all on ${TABLE} to anon, authenticated, service_role`] });
    await expect(refusal).rejects.toThrow(
      /public\.tidesync_test_owner_notes: authenticated may insert and update created_by, the column naming each row's creator.*that other user's data export/s,
    );
    await expect(refusal).rejects.toThrow(
      `revoke all on ${TABLE} from public, anon, authenticated, service_role; grant select, delete on ${TABLE} to authenticated; ` +
        `grant insert (id, list_id, body), update (id, list_id, body) on ${TABLE} to authenticated`,
    );
  });

  it("refuses a column grant of it, naming the column revoke", async () => {
    await expect(generateWithTable(NAME, { before: [`grant insert (created_by) on ${TABLE} to authenticated`] })).rejects.toThrow(
      /public\.tidesync_test_owner_notes: authenticated may insert created_by.*revoke insert \(created_by\) on public\.tidesync_test_owner_notes from public, authenticated/s,
    );
    await expect(generateWithTable(NAME, { after: [`grant update (created_by) on ${TABLE} to authenticated`] })).rejects.toThrow(
      /public\.tidesync_test_owner_notes: authenticated may update created_by.*revoke update \(created_by\) on public\.tidesync_test_owner_notes from public, authenticated/s,
    );
  });

  it("takes the table whose created_by only the database sets", async () => {
    expect(await generateWithTable(NAME)).toContain("tidesync_test_owner_notes");
  });
});
