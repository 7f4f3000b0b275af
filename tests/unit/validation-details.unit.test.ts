// The envelope's field details: JSON Pointers and stable codes a client can branch on.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { issueCount, jsonPointer, validationMessage, zodIssuesToDetails } from "../../functions/_shared/validation-details.ts";

function detailsFor(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error("expected the input to be invalid");
  return zodIssuesToDetails(result.error.issues, input);
}

describe("jsonPointer", () => {
  it("is empty for the root and escapes ~ and / as RFC 6901 says", () => {
    expect(jsonPointer([])).toBe("");
    expect(jsonPointer(["ops", 3, "data", "title"])).toBe("/ops/3/data/title");
    expect(jsonPointer(["a/b", "c~d"])).toBe("/a~1b/c~0d");
  });
});

describe("zodIssuesToDetails", () => {
  const schema = z.strictObject({
    title: z.string().max(5),
    tags: z.array(z.string()).min(1),
    count: z.number().int().max(10),
    kind: z.enum(["a", "b"]),
    email: z.email().optional(),
  });
  const valid = { title: "ok", tags: ["x"], count: 1, kind: "a" };

  it("reports a missing field as required", () => {
    expect(detailsFor(schema, { tags: ["x"], count: 1, kind: "a" })).toEqual([{ field: "/title", code: "required", message: "is required" }]);
  });

  it("reports a missing field as required whatever its type (an enum, a literal, a union, a nested field), as the input shows", () => {
    expect(detailsFor(schema, { title: "ok", tags: ["x"], count: 1 })).toEqual([{ field: "/kind", code: "required", message: "is required" }]);
    const others = z.object({ lit: z.literal("x"), either: z.union([z.string(), z.number()]), inner: z.object({ kind: z.enum(["a"]) }) });
    expect(detailsFor(others, { inner: {} }).map((d) => [d.field, d.code])).toEqual([["/lit", "required"], ["/either", "required"], ["/inner/kind", "required"]]);
    // A present value of the wrong kind is not missing; nor is a key only the prototype holds.
    expect(detailsFor(schema, { ...valid, kind: null })).toEqual([{ field: "/kind", code: "invalid_value", message: 'must be one of "a", "b"' }]);
    expect(detailsFor(z.object({ constructor: z.enum(["a"]) }), {})).toEqual([{ field: "/constructor", code: "required", message: "is required" }]);
    // A custom issue keeps its schema's code.
    const custom = z.object({ x: z.unknown().superRefine((_, ctx) => ctx.addIssue({ code: "custom", message: "needs x", params: { code: "x_needed" } })) });
    expect(detailsFor(custom, {})).toEqual([{ field: "/x", code: "x_needed", message: "needs x" }]);
  });

  it("reports a wrong type with the expected type", () => {
    expect(detailsFor(schema, { ...valid, count: "1" })).toEqual([{ field: "/count", code: "invalid_type", message: "must be number" }]);
  });

  it("reports strings and arrays out of bounds as too_long / too_short with the unit", () => {
    expect(detailsFor(schema, { ...valid, title: "too long" })).toEqual([{ field: "/title", code: "too_long", message: "at most 5 characters" }]);
    expect(detailsFor(schema, { ...valid, tags: [] })).toEqual([{ field: "/tags", code: "too_short", message: "at least 1 items" }]);
  });

  it("reports numbers out of range as too_large", () => {
    expect(detailsFor(schema, { ...valid, count: 11 })).toEqual([{ field: "/count", code: "too_large", message: "at most 10" }]);
  });

  it("lists the allowed values of an enum", () => {
    expect(detailsFor(schema, { ...valid, kind: "c" })).toEqual([{ field: "/kind", code: "invalid_value", message: 'must be one of "a", "b"' }]);
  });

  it("reports a malformed format", () => {
    const [detail] = detailsFor(schema, { ...valid, email: "not-an-email" });
    expect(detail).toMatchObject({ field: "/email", code: "invalid_format" });
  });

  it("gives each unexpected field its own pointer", () => {
    expect(detailsFor(schema, { ...valid, extra: 1, other: 2 })).toEqual([
      { field: "/extra", code: "unexpected_field", message: "is not an accepted field" },
      { field: "/other", code: "unexpected_field", message: "is not an accepted field" },
    ]);
  });

  it("an unexpected key Postgres cannot store (NUL, an unpaired surrogate) is invalid_characters on its object, once; the others keep their pointers", () => {
    const nested = z.strictObject({ device: z.strictObject({ id: z.string() }) });
    const input = { "\uDC00": 1, device: { id: "x", "a\u0000": 1, "\uD800b": 2, extra: 3 } };
    const details = detailsFor(nested, input);
    expect(details).toEqual([
      { field: "/device", code: "invalid_characters", message: "has a key that contains a character that cannot be stored (NUL or an unpaired surrogate)" },
      { field: "/device/extra", code: "unexpected_field", message: "is not an accepted field" },
      { field: "", code: "invalid_characters", message: "has a key that contains a character that cannot be stored (NUL or an unpaired surrogate)" },
    ]);
    expect(issueCount(nested.safeParse(input).error!.issues)).toBe(3);
    // A pair is one character, and a key like any other.
    expect(detailsFor(nested, { device: { id: "x", "\uD83E\uDD80": 1 } })).toEqual([{ field: "/device/\uD83E\uDD80", code: "unexpected_field", message: "is not an accepted field" }]);
  });

  it("points into nested arrays and honours a prefix", () => {
    const nested = z.object({ ops: z.array(z.object({ data: z.object({ title: z.string() }) })) });
    const input = { ops: [{ data: { title: "a" } }, { data: { title: 1 } }] };
    const result = nested.safeParse(input);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(zodIssuesToDetails(result.error.issues, input)[0].field).toBe("/ops/1/data/title");
    expect(zodIssuesToDetails(result.error.issues, input, ["body"])[0].field).toBe("/body/ops/1/data/title");
  });

  it("keeps the code and message of a custom issue", () => {
    const custom = z.string().superRefine((value, ctx) => {
      if (value === "bad") ctx.addIssue({ code: "custom", message: "is reserved", params: { code: "reserved_name" } });
    });
    expect(detailsFor(custom, "bad")).toEqual([{ field: "", code: "reserved_name", message: "is reserved" }]);
  });
});

describe("validationMessage", () => {
  it("counts the invalid fields", () => {
    expect(validationMessage(1)).toBe("1 field is invalid");
    expect(validationMessage(2)).toBe("2 fields are invalid");
  });
});

describe("a flood of unknown keys", () => {
  it("builds at most `limit` details and still counts every field", () => {
    const strict = z.strictObject({ title: z.string() });
    const flood = Object.fromEntries([["title", 1], ...Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 0])]);
    const parsed = strict.safeParse(flood);
    expect(parsed.success).toBe(false);
    const issues = parsed.error!.issues;
    expect(issueCount(issues)).toBe(50_001);
    const details = zodIssuesToDetails(issues, flood, ["data"], 20);
    expect(details).toHaveLength(20);
    expect(details[0]).toMatchObject({ field: "/data/title" });
    expect(details[1]).toEqual({ field: "/data/k0", code: "unexpected_field", message: "is not an accepted field" });
    expect(zodIssuesToDetails(issues, flood, ["data"])).toHaveLength(50_001);
  });
});

describe("integers beyond 2^53", () => {
  // zod's .int() already bounds an integer to the safe range; the .max() of the same bound (kept
  // for the OpenAPI document) gave the client two identical details for one field.
  it("is one too_large detail per field", async () => {
    const { syncOpSchema } = await import("../../functions/_shared/schemas/sync.ts");
    const { artifactSchema } = await import("../../functions/_shared/schemas/releases.ts");
    const op = { op_id: "00000000-0000-4000-8000-000000000001", collection: "tasks", record_id: "00000000-0000-4000-8000-000000000002",
                 type: "upsert", base_version: 2 ** 60, data: {} };
    const details = detailsFor(syncOpSchema, op);
    expect(details).toEqual([{ field: "/base_version", code: "too_large", message: expect.stringContaining("9007199254740991") }]);
    expect(validationMessage(issueCount(syncOpSchema.safeParse(op).error!.issues))).toBe("1 field is invalid");
    const artifact = detailsFor(artifactSchema, { path: "a.apk", size: 2 ** 60, sha256: "0".repeat(64) }).filter((d) => d.field === "/size");
    expect(artifact).toEqual([{ field: "/size", code: "too_large", message: expect.stringContaining("9007199254740991") }]);
  });

  it("is one detail per field and code, with the tighter bound, where the schema's own bound is below 2^53", async () => {
    const { deviceRegistrationSchema } = await import("../../functions/_shared/schemas/devices.ts");
    const device = { installation_id: "00000000-0000-4000-8000-000000000001", platform: "ios", app_version: "1", build_number: 1e20 };
    expect(detailsFor(deviceRegistrationSchema, device)).toEqual([{ field: "/build_number", code: "too_large", message: "at most 2147483647" }]);
    expect(issueCount(deviceRegistrationSchema.safeParse(device).error!.issues)).toBe(1);
    // The same, bounds stated in either order; the lower one likewise.
    const both = z.number().max(10).max(5).min(-5).min(-10);
    expect(detailsFor(both, 1e20)).toEqual([{ field: "", code: "too_large", message: "at most 5" }]);
    expect(detailsFor(both, -1e20)).toEqual([{ field: "", code: "too_small", message: "at least -5" }]);
  });
});
