// One clock and one format for every server_time (issue 8; docs/errors.md,
// "server_time"): each route that answers one, through the real function,
// answers the database's now() as ISO 8601 in UTC with microseconds and "Z".
// The database's clock is read before and after each request (the stack's
// admin connection): server_time lies between the two readings. Where the
// request's transaction writes a time (a session start's last_seen_at, a
// deletion's requested_at, a pushed record's updated_at), server_time is that
// very instant. The OpenAPI document is the list of routes answering one.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DELETION_CONFIRMATION } from "../../functions/_shared/schemas/account-deletion.ts";
import { serverTimeSchema } from "../../functions/_shared/schemas/server-time.ts";
import { phone } from "../support/device-sessions.ts";
import { adminSql, type ApiResponse, call, createTestUser } from "../support/harness.ts";
import { upsert } from "../support/shared-lists.ts";

const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** Microseconds since the epoch of a time in the wire format. */
function micros(wire: string): bigint {
  return BigInt(Date.parse(`${wire.slice(0, 23)}Z`)) * 1000n + BigInt(wire.slice(23, 26));
}

/** The database's clock, in microseconds since the epoch. */
async function databaseNow(): Promise<bigint> {
  const [{ us }] = await adminSql<{ us: string }[]>`select (extract(epoch from now()) * 1000000)::bigint::text as us`;
  return BigInt(us);
}

/** A timestamptz the database holds, in microseconds since the epoch (`query` selects it as `at`). */
async function storedMicros(query: Promise<{ at: string }[]>): Promise<bigint> {
  const [row] = await query;
  return BigInt(row.at);
}

/**
 * Sends `request` between two readings of the database's clock; asserts its
 * status, server_time's exact format and that it lies between the readings.
 */
async function serverTimeOf(request: () => Promise<ApiResponse>, status: number): Promise<{ response: ApiResponse; at: bigint }> {
  const before = await databaseNow();
  const response = await request();
  const after = await databaseNow();
  expect(response.status, response.text).toBe(status);
  const wire = response.body.server_time;
  expect(wire).toMatch(WIRE_TIME);
  const at = micros(wire);
  expect(at >= before && at <= after, `server_time ${wire} within the database's now() before (${before}) and after (${after}) the request`)
    .toBe(true);
  return { response, at };
}

// Every route whose 2xx answer carries server_time, each fetched below.
const ROUTES = [
  "GET /v1/meta",
  "GET /v1/whoami",
  "POST /v1/auth/session",
  "GET /v1/users/me/notifications/history",
  "GET /v1/users/me/deletion",
  "POST /v1/users/me/deletion",
  "POST /v1/sync/batch",
  "GET /v1/sync/changes",
  "GET /v1/releases/check",
];

describe("server_time: the database's clock, ISO 8601 UTC with microseconds, on every route", () => {
  it("GET /v1/meta (no auth)", async () => {
    await serverTimeOf(() => call("/v1/meta"), 200);
  });

  it("GET /v1/whoami", async () => {
    const user = await createTestUser();
    await serverTimeOf(() => call("/v1/whoami", { token: user.token }), 200);
  });

  it("POST /v1/auth/session: the transaction's now(), the device's new last_seen_at", async () => {
    const user = await createTestUser();
    const { response, at } = await serverTimeOf(
      () => call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone() } }),
      201,
    );
    const lastSeen = await storedMicros(adminSql<{ at: string }[]>`
      select (extract(epoch from last_seen_at) * 1000000)::bigint::text as at from app_private.devices where id = ${response.body.device.id}`);
    expect(at).toBe(lastSeen);
  });

  it("GET /v1/users/me/notifications/history", async () => {
    const user = await createTestUser();
    await serverTimeOf(() => call("/v1/users/me/notifications/history", { token: user.token }), 200);
  });

  it("GET and POST /v1/users/me/deletion: scheduling answers its transaction's now(), the request's requested_at", async () => {
    const user = await createTestUser();
    await serverTimeOf(() => call("/v1/users/me/deletion", { token: user.token }), 200);
    const { at } = await serverTimeOf(
      () => call("/v1/users/me/deletion", { method: "POST", token: user.token, body: { confirm: DELETION_CONFIRMATION } }),
      202,
    );
    const requested = await storedMicros(adminSql<{ at: string }[]>`
      select (extract(epoch from requested_at) * 1000000)::bigint::text as at
      from app_private.account_deletion_requests where user_id = ${user.userId}`);
    expect(at).toBe(requested);
    await serverTimeOf(() => call("/v1/users/me/deletion", { token: user.token }), 200);
  });

  it("POST /v1/sync/batch and GET /v1/sync/changes: a pushed record's updated_at is the push's server_time", async () => {
    const user = await createTestUser();
    const op = upsert("tasks", randomUUID(), { list_id: user.userId, title: "server time" });
    const { response } = await serverTimeOf(() => call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops: [op] } }), 200);
    expect(response.body.results[0].status).toBe("applied");
    expect(response.body.results[0].record.updated_at).toBe(response.body.server_time);
    await serverTimeOf(() => call("/v1/sync/changes", { token: user.token }), 200);
  });

  it("GET /v1/releases/check", async () => {
    const user = await createTestUser();
    await serverTimeOf(() => call("/v1/releases/check?platform=ios&channel=beta&build_number=1", { token: user.token }), 200);
  });

  it("the OpenAPI document lists exactly these routes with a server_time, each described as the database's clock", async () => {
    const doc = (await call("/v1/openapi.json")).body;
    const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema);
    const answering: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const [status, answer] of Object.entries<any>(operation.responses ?? {})) {
          if (!status.startsWith("2")) continue;
          const property = resolve(answer.content?.["application/json"]?.schema)?.properties?.server_time;
          if (!property) continue;
          answering.push(`${method.toUpperCase()} ${path.replace(/^\/api/, "")}`);
          expect(property.description, `${method} ${path} ${status}`).toBe(serverTimeSchema.description);
        }
      }
    }
    expect([...new Set(answering)].sort()).toEqual([...ROUTES].sort());
  });
});
