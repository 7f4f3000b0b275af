// What `npm start` warns of (scripts/lib/generated-collections-drift.ts): the
// database syncs other tables, membership tables or columns than the function
// was generated with (functions/_shared/sync-collections.generated.ts), as
// after a migration that adds a synced table without `npm run generate`:
// GET /v1/meta leaves the table out and a push of it is unknown_collection.
import { describe, expect, it } from "vitest";
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import { type DatabaseCollection, generatedCollectionsDrift, generatedCollectionsWarning } from "../../scripts/lib/generated-collections-drift.ts";

/** The database as `npm run generate` saw it: every generated collection, as generated. */
const asGenerated = (): DatabaseCollection[] => SYNC_COLLECTIONS.map((c) => ({
  collection: c.name, table: c.table, member_column: c.membership_user_column, columns: ["id", ...c.fields.map((f) => f.name)],
}));

describe("npm start: the synced tables against the generated collections", () => {
  it("nothing when the database syncs what the function was generated with (whatever order)", () => {
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, asGenerated().reverse())).toEqual([]);
    expect(generatedCollectionsWarning([])).toBeUndefined();
  });

  it("a synced table added without npm run generate, and one no longer synced, each named", () => {
    const database = [...asGenerated().filter((c) => c.collection !== "tasks"),
      { collection: "notes", table: "public.notes", member_column: null, columns: ["id", "list_id", "body"] }];
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      "public.notes (collection notes) is synced by the database but not by the function: GET /v1/meta leaves it out and a push of it is refused unknown_collection",
      "public.tasks (collection tasks) is no longer synced by the database but the function still syncs it",
    ]);
  });

  it("a membership table made or unmade, and a table's columns added or dropped", () => {
    const database = asGenerated().map((c) =>
      c.collection === "list_members" ? { ...c, member_column: null }
      : c.collection === "lists" ? { ...c, member_column: "owner_id" }
      : c.collection === "tasks" ? { ...c, columns: [...c.columns.filter((col) => col !== "title"), "estimate"] }
      : c);
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      "public.list_members (collection list_members) is no longer a membership table in the database (the function's member column: user_id)",
      "public.lists (collection lists) is a membership table in the database (member column owner_id), not in the function",
      "public.tasks (collection tasks) has columns the function does not know: estimate (a push that sends them is refused)",
      "public.tasks (collection tasks) lacks columns the function names: title (its pulls and pushes answer 503 UNAVAILABLE)",
    ]);
  });

  it("the warning names them and says to run npm run generate and restart", () => {
    const warning = generatedCollectionsWarning(["public.notes (collection notes) is synced by the database but not by the function: …"]);
    expect(warning).toMatch(/functions\/_shared\/sync-collections\.generated\.ts/);
    expect(warning).toMatch(/public\.notes \(collection notes\)/);
    expect(warning).toMatch(/npm run generate.*restart npm start/s);
  });
});
