// The collections as the database declares them (sync-collections.generated.ts)
// become the push's validation: required columns on create, server-owned
// columns refused, lengths and patterns from the table's checks, ids lowercased.
import { describe, expect, it } from "vitest";
import { collectionNames, collectionSchemas, findCollection, schemaFor } from "../../functions/_shared/collections.ts";
import type { GeneratedField } from "../../functions/_shared/sync-collection-types.ts";
import { zodIssuesToDetails } from "../../functions/_shared/validation-details.ts";

const tasks = findCollection("tasks")!;
const lists = findCollection("lists")!;
const LIST = "0A0B0C0D-0000-4000-8000-000000000001";

function codes(result: { success: boolean; error?: { issues: { path: PropertyKey[]; code: string; params?: unknown }[] } }) {
  return (result.error?.issues ?? []).map((i) => `${i.path.join(".")}:${(i.params as { code?: string } | undefined)?.code ?? i.code}`);
}

describe("collections from the database", () => {
  it("lists every synced table with its scope", () => {
    // arrayContaining: an app's own synced tables are collections too.
    expect(collectionNames()).toEqual(expect.arrayContaining(["lists", "tasks"]));
    expect(tasks).toMatchObject({ table: "public.tasks", scopeColumn: "list_id", scopeCollection: "lists", isScope: false });
    expect(lists).toMatchObject({ table: "public.lists", scopeColumn: "id", isScope: true });
  });

  it("a create needs the required columns; a change does not", () => {
    expect(codes(tasks.create.safeParse({ title: "t" }))).toEqual(["list_id:invalid_type"]);
    expect(tasks.update.safeParse({ done: true }).success).toBe(true);
    expect(tasks.create.safeParse({ title: "t", list_id: LIST }).success).toBe(true);
  });

  it("server-owned columns are read_only, unknown ones unexpected", () => {
    expect(codes(tasks.update.safeParse({ created_by: LIST }))).toEqual(["created_by:read_only"]);
    expect(codes(tasks.update.safeParse({ owner: "me" }))).toEqual([":unrecognized_keys"]);
  });

  it("a column the device sets at create but may not change (insert grant, no update grant) says so, not that the server sets it", () => {
    // docs/security-model.md step 2: insert (id, list_id, body), update (id, body): notes cannot move between lists.
    const uuid = (name: string, facts: Partial<GeneratedField>): GeneratedField =>
      ({ name, type: "uuid", nullable: false, has_default: false, insertable: true, updatable: true, ...facts });
    const fields = [
      uuid("list_id", { updatable: false }),
      { ...uuid("body", {}), type: "text" },
      uuid("created_by", { insertable: false, updatable: false, has_default: true }),
    ];
    const details = (data: Record<string, unknown>) => {
      const result = schemaFor({ fields }, "update").safeParse(data);
      return zodIssuesToDetails(result.error?.issues ?? [], data);
    };
    expect(schemaFor({ fields }, "create").safeParse({ list_id: LIST, body: "c" }).success).toBe(true);
    expect(details({ list_id: LIST, body: "c" })).toEqual([
      { field: "/list_id", code: "read_only", message: "cannot be changed after the record is created" },
    ]);
    expect(details({ created_by: LIST })).toEqual([{ field: "/created_by", code: "read_only", message: "is set by the server" }]);
  });

  it("a column the device may change but not set at create (update grant, no insert grant) says so at create, not that clients cannot set it", () => {
    // list_members.role: an owner changes it (update), nobody creates a membership with it (invites do).
    const role: GeneratedField = { name: "role", type: "text", nullable: false, has_default: true, insertable: false, updatable: true };
    const data = { role: "editor" };
    const result = schemaFor({ fields: [role] }, "create").safeParse(data);
    expect(zodIssuesToDetails(result.error?.issues ?? [], data)).toEqual([
      { field: "/role", code: "read_only", message: "cannot be set when the record is created, only changed afterwards" },
    ]);
    expect(schemaFor({ fields: [role] }, "update").safeParse(data).success).toBe(true);
  });

  it("a column no client may set says why: the server sets it only when something does (a default, a trigger)", () => {
    // docs/sync.md's notes with `note_key text not null` outside the insert grant: nothing sets it,
    // so "is set by the server" was false (the table needs the grant or a default: npm run generate refuses it).
    const text = (name: string, facts: Partial<GeneratedField>): GeneratedField =>
      ({ name, type: "text", nullable: false, has_default: false, insertable: false, updatable: false, ...facts });
    const fields = [
      text("note_key", {}),
      text("label", { nullable: true }),
      text("created_at", { has_default: true }),
      text("code", { filled_by_trigger: true }),
    ];
    for (const mode of ["create", "update"] as const) {
      const data = { note_key: "k", label: "l", created_at: "t", code: "c" };
      const result = schemaFor({ fields }, mode).safeParse(data);
      expect(zodIssuesToDetails(result.error?.issues ?? [], data), mode).toEqual([
        { field: "/note_key", code: "read_only", message: "cannot be set by clients" },
        { field: "/label", code: "read_only", message: "cannot be set by clients" },
        { field: "/created_at", code: "read_only", message: "is set by the server" },
        { field: "/code", code: "read_only", message: "is set by the server" },
      ]);
    }
  });

  it("lengths, patterns, types and nullability come from the table", () => {
    expect(codes(tasks.update.safeParse({ title: "" }))).toEqual(["title:too_small"]);
    expect(codes(tasks.update.safeParse({ title: "x".repeat(201) }))).toEqual(["title:too_big"]);
    expect(codes(tasks.update.safeParse({ title: null }))).toEqual(["title:invalid_type"]);
    expect(tasks.update.safeParse({ notes: null }).success).toBe(true);
    expect(codes(lists.update.safeParse({ color: "red" }))).toEqual(["color:invalid_format"]);
    expect(codes(tasks.update.safeParse({ due_date: "tomorrow" }))).toEqual(["due_date:invalid_format"]);
    expect(codes(tasks.update.safeParse({ position: Number.POSITIVE_INFINITY }))).toEqual(["position:invalid_type"]);
    expect(codes(tasks.update.safeParse({ title: "a\u0000b" }))).toEqual(["title:invalid_characters"]);
  });

  it("uuids are lowercased once, at the edge", () => {
    const parsed = tasks.update.parse({ list_id: LIST });
    expect(parsed.list_id).toBe(LIST.toLowerCase());
  });

  it("GET /v1/meta publishes each field's type and writability", () => {
    expect(collectionSchemas().tasks.fields.title).toMatchObject({ type: "text", nullable: false, insertable: true, updatable: true, max_length: 200, min_length: 1 });
    expect(collectionSchemas().tasks.fields.created_by).toMatchObject({ insertable: false, updatable: false });
    expect(collectionSchemas().lists.scope).toBe("id");
  });
});
