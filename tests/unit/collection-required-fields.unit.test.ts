// Which columns a create must carry (schemaFor, functions/_shared/collections.ts),
// from the fields as the generator describes them: a NOT NULL column without a
// default is required, unless the database fills it (a default, an identity, a
// domain's default: has_default) or may fill it (a BEFORE INSERT row trigger of
// the table: filled_by_trigger), in which case the database has the last word
// (a row left null is refused 23502, answered `required` on the field).
import { describe, expect, it } from "vitest";
import { schemaFor } from "../../functions/_shared/collections.ts";
import type { GeneratedField } from "../../functions/_shared/sync-collection-types.ts";

const text = (name: string, facts: Partial<GeneratedField>): GeneratedField =>
  ({ name, type: "text", nullable: false, has_default: false, insertable: true, updatable: true, ...facts });

function missing(fields: GeneratedField[], data: Record<string, unknown>, mode: "create" | "update" = "create"): string[] {
  const result = schemaFor({ fields }, mode).safeParse(data);
  return (result.error?.issues ?? []).map((i) => i.path.join("."));
}

describe("required fields of a create", () => {
  it("a NOT NULL column without a default is required on create, not on update", () => {
    const fields = [text("title", {}), text("note", { nullable: true })];
    expect(missing(fields, {})).toEqual(["title"]);
    expect(missing(fields, {}, "update")).toEqual([]);
  });

  it("one the database fills (a default) or a BEFORE INSERT trigger may fill is not", () => {
    const fields = [text("label", { has_default: true }), text("code", { filled_by_trigger: true }), text("title", {})];
    expect(missing(fields, { title: "t" })).toEqual([]);
    expect(missing(fields, {})).toEqual(["title"]);
  });

  it("a value sent for a trigger-filled column is still checked (type, not null)", () => {
    const fields = [text("code", { filled_by_trigger: true })];
    expect(missing(fields, { code: 5 })).toEqual(["code"]);
    expect(missing(fields, { code: null })).toEqual(["code"]);
    expect(missing(fields, { code: "given" })).toEqual([]);
  });
});
