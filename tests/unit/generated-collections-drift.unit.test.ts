// What `npm start` warns of (scripts/lib/generated-collections-drift.ts): the
// database syncs other tables than the function was generated with
// (functions/_shared/sync-collections.generated.ts), or the same tables in
// another shape, as after a migration applied without `npm run generate`: a
// table synced since is left out of GET /v1/meta and a push of it is
// unknown_collection; a check, a nullability, a default, an enum's labels or a
// column privilege changed since leaves the function validating pushes by the
// old shape (a title the new check refuses is accepted, and refused by the
// database instead). The database side is what the generator reads
// (readSyncCollections), so everything it writes is compared.
import { describe, expect, it } from "vitest";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import { generateRefusalDrift, generatedCollectionsDrift, generatedCollectionsWarning } from "../../scripts/lib/generated-collections-drift.ts";

/** The database as `npm run generate` saw it: every generated collection, as generated (a copy to change). */
const asGenerated = (): GeneratedCollection[] => structuredClone(SYNC_COLLECTIONS) as GeneratedCollection[];

/** `database` with collection `name` changed by `change`. */
function changed(name: string, change: (c: GeneratedCollection) => void, database = asGenerated()): GeneratedCollection[] {
  change(database.find((c) => c.name === name)!);
  return database;
}

const field = (c: GeneratedCollection, name: string) => c.fields.find((f) => f.name === name)!;

describe("npm start: the synced tables against the generated collections", () => {
  it("nothing when the database syncs what the function was generated with (whatever order)", () => {
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, asGenerated().reverse())).toEqual([]);
    expect(generatedCollectionsWarning([])).toBeUndefined();
  });

  it("a synced table added without npm run generate, and one no longer synced, each named", () => {
    const notes: GeneratedCollection = {
      name: "notes", table: "public.notes", scope_column: "list_id", scope_collection: "lists", constraints: {}, references: ["lists"], foreign_keys: {}, owner_column: null, membership_user_column: null,
      fields: [{ name: "body", type: "text", category: "S", nullable: false, has_default: false, insertable: true, updatable: true }],
    };
    const database = [...asGenerated().filter((c) => c.name !== "tasks"), notes];
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      "public.notes (collection notes) is synced by the database but not by the function: GET /v1/meta leaves it out and a push of it is refused unknown_collection",
      "public.tasks (collection tasks) is no longer synced by the database but the function still syncs it",
    ]);
  });

  it("a membership table made or unmade, and a table's columns added or dropped", () => {
    let database = changed("list_members", (c) => (c.membership_user_column = null));
    database = changed("lists", (c) => (c.membership_user_column = "owner_id"), database);
    database = changed("tasks", (c) => {
      c.fields = [...c.fields.filter((f) => f.name !== "title"),
        { name: "estimate", type: "integer", category: "N", nullable: true, has_default: false, insertable: true, updatable: true }];
    }, database);
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      "public.list_members (collection list_members) is no longer a membership table in the database (the function's member column: user_id)",
      "public.lists (collection lists) is a membership table in the database (member column owner_id), not in the function",
      "public.tasks (collection tasks) has columns the function does not know: estimate (a push that sends them is refused)",
      "public.tasks (collection tasks) lacks columns the function names: title (its pulls and pushes answer 503 UNAVAILABLE)",
    ]);
  });

  it("a check, a constraint, a nullability, a default, a type, an enum's labels or a column privilege changed: named per collection and field", () => {
    let database = changed("tasks", (c) => {
      field(c, "title").max_length = 100; // a migration's new check, under another name
      c.constraints = { ...c.constraints, tasks_title_check: ["title"] };
      delete c.constraints.tasks_title_length;
    });
    database = changed("lists", (c) => {
      Object.assign(field(c, "archived"), { nullable: true, has_default: false });
      delete field(c, "color").pattern;
      field(c, "title").updatable = false; // revoke update (title)
      c.constraints.lists_position_finite = ["position", "title"];
    }, database);
    database = changed("list_members", (c) => {
      Object.assign(field(c, "role"), { type: "public.member_role", category: "E", enum_values: ["owner", "editor", "viewer"] });
    }, database);
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      `public.list_members (collection list_members): field role differs (type "text" → "public.member_role", category "S" → "E", enum_values none → ["owner","editor","viewer"])`,
      `public.lists (collection lists): field title differs (updatable true → false), field color differs (pattern "^#[0-9a-fA-F]{6}$" → none), ` +
        `field archived differs (nullable false → true, has_default true → false), constraint lists_position_finite now on position, title (was position)`,
      "public.tasks (collection tasks): field title differs (max_length 200 → 100), constraint tasks_title_check added, constraint tasks_title_length dropped",
    ]);
  });

  it("a scope, an owner column or the columns' order changed", () => {
    const database = changed("tasks", (c) => {
      c.scope_column = "board_id";
      c.scope_collection = "boards";
      c.owner_column = null;
      c.fields = [field(c, "title"), ...c.fields.filter((f) => f.name !== "title")];
    });
    expect(generatedCollectionsDrift(SYNC_COLLECTIONS, database)).toEqual([
      `public.tasks (collection tasks): scope_column "list_id" → "board_id", scope_collection "lists" → "boards", owner_column "created_by" → none, ` +
        "columns in another order (title, list_id, notes, done, due_date, position, created_by, created_at; the function's: list_id, title, notes, done, due_date, position, created_by, created_at)",
    ]);
  });

  it("what npm run generate would refuse in the database, each line of its refusal", () => {
    expect(generateRefusalDrift("public.a: authenticated may insert rows but not choose their id …\npublic.b: authenticated has a delete policy …")).toEqual([
      "npm run generate would refuse the database's synced tables (what else differs is unknown until the migration is fixed): public.a: authenticated may insert rows but not choose their id …",
      "npm run generate would refuse the database's synced tables (what else differs is unknown until the migration is fixed): public.b: authenticated has a delete policy …",
    ]);
  });

  it("the warning names them and says to run npm run generate and restart", () => {
    const warning = generatedCollectionsWarning(["public.notes (collection notes) is synced by the database but not by the function: …"]);
    expect(warning).toMatch(/functions\/_shared\/sync-collections\.generated\.ts/);
    expect(warning).toMatch(/public\.notes \(collection notes\)/);
    expect(warning).toMatch(/\nRun `npm run generate`, then restart npm start\.$/);
  });

  // `npm run generate` alone would only refuse again: the fix is the statement shown, in a migration.
  it("a refusal's warning says to put the statements shown above in a migration, then run npm run generate and restart", () => {
    const warning = generatedCollectionsWarning(generateRefusalDrift(
      "public.notes: its writes into a list are not judged again … (missing: writer_role_rechecked_on_update) …:\n" +
        "  create or replace trigger writer_role_rechecked_on_update after update on public.notes …",
    ))!;
    expect(warning).toContain("\n      create or replace trigger writer_role_rechecked_on_update after update on public.notes …\n");
    expect(warning).not.toMatch(/Run `npm run generate`, then restart/);
    expect(warning).toMatch(
      /\nFix it in a new migration with the statements shown above \(`npm run generate` refuses the migrations until then\), then run `npm run generate` and restart npm start \(it applies the migration\)\.$/,
    );
  });
});
