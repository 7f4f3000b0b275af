// docs/openapi.json (what GET /v1/openapi.json serves) validated as a client's generated code or a
// gateway would validate requests against it: it must refuse what the service refuses, so that a
// request the document calls valid is not answered 400 or `rejected`.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";

const document = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
// The document's own keywords (example, discriminator, …) are not JSON Schema's; formats are
// checked by the patterns beside them (a uuid's).
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema({ $id: "openapi.json", components: document.components }, "openapi.json");

describe("SyncOp as published", () => {
  const validOp = ajv.compile({ $ref: "openapi.json#/components/schemas/SyncOp" });
  const op = { op_id: "00000000-0000-4000-8000-000000000001", collection: "tasks", record_id: "00000000-0000-4000-8000-000000000002" };

  it("refuses a delete carrying data, which the service rejects (VALIDATION_FAILED, /ops/i/data unexpected_field)", () => {
    expect(validOp({ ...op, type: "delete", base_version: 3, data: { title: "x" } })).toBe(false);
    expect(validOp({ ...op, type: "delete", base_version: 3, data: {} })).toBe(false);
  });

  it("takes an upsert with data and a delete without", () => {
    expect(validOp({ ...op, type: "upsert", base_version: null, data: { title: "x" } }), JSON.stringify(validOp.errors)).toBe(true);
    expect(validOp({ ...op, type: "upsert", base_version: 3 }), JSON.stringify(validOp.errors)).toBe(true);
    expect(validOp({ ...op, type: "delete", base_version: 3 }), JSON.stringify(validOp.errors)).toBe(true);
  });
});
