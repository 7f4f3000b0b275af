// One uuid rule for the whole wire: what Postgres's uuid type stores (any
// version and variant digits, any case), lower-cased. zod's z.uuid() took only
// RFC 9562 digits: a row a member inserted through the Data API as
// 11111111-1111-1111-1111-111111111111 made every pull answer the client refused.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syncRecordSchema, syncOpSchema } from "../../functions/_shared/schemas/sync.ts";
import { whoamiResponseSchema } from "../../functions/_shared/schemas/whoami.ts";
import { isUuid, UUID_PATTERN, uuidSchema } from "../../functions/_shared/uuid.ts";
import { zodIssuesToDetails } from "../../functions/_shared/validation-details.ts";

/** Any 128 bits, hyphenated, each hex digit in either case: all of them are uuids to Postgres. */
const anyUuid = fc.array(fc.constantFrom(..."0123456789abcdefABCDEF"), { minLength: 32, maxLength: 32 })
  .map((d) => [d.slice(0, 8), d.slice(8, 12), d.slice(12, 16), d.slice(16, 20), d.slice(20)].map((g) => g.join("")).join("-"));

const NOT_RFC_9562 = ["11111111-1111-1111-1111-111111111111", "00000000-0000-0000-0000-00000000a11c", "12345678-9abc-0def-7123-456789abcdef"];
const NOT_UUIDS = [
  "", "not-a-uuid", "{11111111-1111-1111-1111-111111111111}", "11111111111111111111111111111111", "urn:uuid:11111111-1111-1111-1111-111111111111",
  "11111111-1111-1111-1111-11111111111g", "11111111-1111-1111-1111-1111111111111", " 11111111-1111-1111-1111-111111111111", "1111-11111111-1111-1111-111111111111",
];

describe("uuidSchema", () => {
  it("takes every id Postgres stores, whatever its version and variant digits, and gives it lower-cased", () => {
    fc.assert(fc.property(anyUuid, (id) => {
      expect(isUuid(id)).toBe(true);
      expect(uuidSchema.parse(id)).toBe(id.toLowerCase());
    }));
  });

  it("refuses what is not a hyphenated uuid, as isUuid does: invalid_format, 'must be a uuid'", () => {
    for (const value of NOT_UUIDS) {
      expect(isUuid(value), value).toBe(false);
      const result = uuidSchema.safeParse(value);
      expect(result.success, value).toBe(false);
      expect(zodIssuesToDetails(result.error!.issues, value)).toEqual([{ field: "", code: "invalid_format", message: "must be a uuid" }]);
    }
  });

  it("the wire schemas take such ids in answers and requests: a record another member wrote, a user id the project chose", () => {
    for (const id of NOT_RFC_9562) {
      const record = { collection: "tasks", id, version: 5, deleted: false, data: { title: "Milk" }, updated_at: "2026-11-28T10:00:00.000000Z" };
      expect(syncRecordSchema.safeParse(record).success, id).toBe(true);
      const whoami = { user_id: id, session_id: id, aal: "aal1", is_anonymous: false, expires_at: "2026-11-28T11:00:00Z", server_time: "2026-11-28T10:00:00.000000Z" };
      expect(whoamiResponseSchema.safeParse(whoami).success, id).toBe(true);
      const op = { op_id: id.toUpperCase(), collection: "tasks", record_id: id.toUpperCase(), type: "delete", base_version: 5 };
      expect(syncOpSchema.parse(op)).toMatchObject({ op_id: id, record_id: id });
    }
  });

  it("docs/openapi.json publishes every uuid with the pattern isUuid uses, which takes those ids", () => {
    const formats: { format?: unknown; pattern?: unknown }[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        if ((node as { format?: unknown }).format === "uuid") formats.push(node as { format?: unknown; pattern?: unknown });
        Object.values(node).forEach(walk);
      }
    };
    walk(JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8")));
    expect(formats.length).toBeGreaterThan(10);
    for (const schema of formats) expect(schema.pattern).toBe(UUID_PATTERN.source);
    // JSON Schema patterns have no flags: the published one must take upper case on its own.
    const published = new RegExp(UUID_PATTERN.source);
    for (const id of NOT_RFC_9562) expect(published.test(id.toUpperCase()), id).toBe(true);
  });
});
