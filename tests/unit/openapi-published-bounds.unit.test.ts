// docs/openapi.json (what GET /v1/openapi.json serves) validated as a client's generated code or a
// gateway would validate requests against it: it must refuse what the service refuses, so that a
// request the document calls valid is not answered 400 or `rejected`.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changesQuerySchema, wholeNumberPattern } from "../../functions/_shared/schemas/sync.ts";

const document = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
// The document's own keywords (example, discriminator, …) are not JSON Schema's; formats are
// checked by the patterns beside them (a uuid's).
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema({ $id: "openapi.json", components: document.components }, "openapi.json");

function parameterSchema(path: string, name: string): object {
  const parameters: { name: string; in: string; schema: object }[] = document.paths[path].get.parameters;
  const parameter = parameters.find((p) => p.in === "query" && p.name === name);
  expect(parameter, `${path} ?${name}`).toBeDefined();
  return parameter!.schema;
}

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

describe("GET /v1/sync/changes ?limit as published", () => {
  const validLimit = ajv.compile(parameterSchema("/api/v1/sync/changes", "limit"));

  it("refuses what the service answers 400 (too_small, too_large, not a whole number)", () => {
    for (const limit of ["0", "00", "1001", "9999", "100000", "999999999", "0000001001", "", "-1", "1.5", "ten", " 5"]) {
      expect(validLimit(limit), JSON.stringify(limit)).toBe(false);
    }
  });

  it("takes 1..max_pull_limit (1000)", () => {
    for (const limit of ["1", "9", "10", "99", "100", "500", "999", "1000", "0500", "000000001"]) {
      expect(validLimit(limit), JSON.stringify(limit)).toBe(true);
    }
  });

  it("takes exactly the texts the service takes", () => {
    const texts = ["", "x", "1e3", "+5", ...Array.from({ length: 1100 }, (_, n) => String(n))];
    for (const n of [0, 1, 7, 10, 99, 100, 999, 1000, 1001, 10000]) {
      for (let width = 1; width <= 11; width++) texts.push(String(n).padStart(width, "0"));
    }
    for (const limit of texts) {
      expect(validLimit(limit), JSON.stringify(limit)).toBe(changesQuerySchema.safeParse({ limit }).success);
    }
  });
});

describe("wholeNumberPattern", () => {
  it("matches a text of at most `digits` digits exactly when its value is in 1..max", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 10_000 }),
      fc.stringMatching(/^[0-9]{1,11}$/),
      (max, text) => {
        expect(new RegExp(wholeNumberPattern(max, 9)).test(text)).toBe(text.length <= 9 && Number(text) >= 1 && Number(text) <= max);
      },
    ), { numRuns: 2000 });
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 10_001 }), (max, n) => {
      expect(new RegExp(wholeNumberPattern(max, 9)).test(String(n))).toBe(n >= 1 && n <= max);
    }));
  });
});
