// Every synced collection has its data-export rule, derived from the table as
// `npm run generate` read it (functions/api/account/export-ownership.ts): a
// table made syncable needs no TypeScript, and a collection whose description
// cannot give a rule is refused here and by the route before the first byte,
// never in the middle of a user's export. What each rule exports is checked
// against the database in tests/integration/export-app-tables.test.ts.
import { describe, expect, it } from "vitest";
import { collectionNames } from "../../functions/_shared/collections.ts";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import { exportRules, ownedRowsRule } from "../../functions/api/account/export-ownership.ts";

/** A synced table as an app's migration and `npm run generate` would describe it. */
function appTable(name: string, ownerColumn: string | null, ownerType = "uuid"): GeneratedCollection {
  return {
    name,
    table: `public.${name}`,
    scope_column: "list_id",
    scope_collection: "lists",
    fields: [
      { name: "list_id", type: "uuid", nullable: false, has_default: false, insertable: true, updatable: true },
      ...(ownerColumn ? [{ name: ownerColumn, type: ownerType, nullable: true, has_default: true, insertable: false, updatable: false }] : []),
    ],
    constraints: {},
    references: ["lists"], foreign_keys: {},
    owner_column: ownerColumn,
    membership_user_column: null,
  };
}

describe("export rules", () => {
  it("exist for exactly the generated collections, in their order, without a rule written per table", () => {
    expect(exportRules().map((r) => r.collection)).toEqual(collectionNames());
  });

  it("of the sample app: the rows the caller created (created_by)", () => {
    expect(Object.fromEntries(exportRules().map((r) => [r.collection, r.by]))).toMatchObject({
      lists: { column: "created_by" },
      tasks: { column: "created_by" },
    });
  });

  it("every generated collection says whether it has an owner column", () => {
    for (const collection of SYNC_COLLECTIONS) expect(collection.owner_column === null || typeof collection.owner_column === "string").toBe(true);
  });

  it("of an app's new table: its created_by column, or else the creator in its sync state", () => {
    const rules = exportRules([...SYNC_COLLECTIONS, appTable("app_gadgets", "created_by"), appTable("app_notes", null)]);
    expect(rules.map((r) => [r.collection, r.by])).toEqual([
      ...SYNC_COLLECTIONS.map((c) => [c.name, c.owner_column ? { column: c.owner_column } : "sync_creator"]),
      ["app_gadgets", { column: "created_by" }],
      ["app_notes", "sync_creator"],
    ]);
  });

  it("refuse a description that cannot give one, with the collection's name (the route answers 500 before the first byte)", () => {
    expect(() => ownedRowsRule(appTable("gadgets", "created_by", "text"))).toThrow(/gadgets: its owner column created_by is not a uuid column/);
    expect(() => ownedRowsRule({ ...appTable("gadgets", null), table: "gadgets; drop table x" })).toThrow(/gadgets: .* is not a qualified table name/);
    const stale = { ...appTable("gadgets", null) } as Partial<GeneratedCollection>;
    delete stale.owner_column;
    expect(() => ownedRowsRule(stale as GeneratedCollection)).toThrow(/gadgets: its description has no owner_column/);
  });
});
