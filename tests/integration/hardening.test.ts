// Faults an outside attack found in the shared request path (issue 11), each
// pinned by what a user would notice:
//   - a revoked token cannot spend its owner's rate-limit budget;
//   - a frozen database (a TCP proxy the test pauses) → 503 UNAVAILABLE with
//     Retry-After instead of a hanging request, and no poisoned connection after;
//     the routes that need no database answer meanwhile;
//   - banned and soft-deleted users are signed out;
//   - oversized request headers → 431 in the envelope;
//   - a trailing slash is the same route as without it (two are no route).
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { type PausableProxy, startPausableProxy } from "../support/pausable-proxy.ts";

const started: FunctionsServer[] = [];
async function server(name: string, env: Record<string, string>): Promise<FunctionsServer> {
  const s = await startFunctionsServer({ ...stack.functionsEnv, ...env }, { name: `${stack.database}-${name}` });
  started.push(s);
  return s;
}

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

/**
 * A function server whose database connections go through a TCP proxy the
 * test can pause (a frozen database), with a 1 s statement timeout.
 */
function frozenDatabaseServer(name: string, env: Record<string, string>) {
  const handle = { proxy: undefined as PausableProxy | undefined, server: undefined as FunctionsServer | undefined };
  beforeAll(async () => {
    const db = new URL(stack.ownerDbUrl);
    handle.proxy = await startPausableProxy({ host: db.hostname, port: Number(db.port || 5432) });
    db.host = `127.0.0.1:${handle.proxy.port}`;
    handle.server = await server(name, { SUPABASE_DB_URL: db.toString(), TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "1000", ...env });
  });
  afterAll(async () => {
    handle.proxy?.resume();
    await handle.proxy?.close();
  });
  return { proxy: () => handle.proxy!, apiUrl: () => handle.server!.apiUrl };
}

describe("a revoked token cannot lock its owner out", () => {
  const LIMIT = 3;
  let limited: FunctionsServer;

  beforeAll(async () => {
    limited = await server("revoked-budget", {
      TIDESYNC_RATE_LIMITS: JSON.stringify({ "auth.session": { limit: LIMIT, window_seconds: 86_400 } }),
    });
  });

  it("requests with a revoked session only ever get 401, and the owner's live session keeps its whole budget", async () => {
    const owner = await createTestUser();
    const stolen = await owner.newSession();
    await adminSql`delete from auth.sessions where id = ${stolen.sessionId}`;

    for (let i = 0; i < LIMIT * 3; i++) {
      expectEnvelope(await call("/v1/whoami", { token: stolen.token, baseUrl: limited.apiUrl }), 401, "UNAUTHENTICATED");
    }
    const live = await call("/v1/whoami", { token: owner.token, baseUrl: limited.apiUrl });
    expect(live.status).toBe(200);
    expect(live.headers.get("ratelimit-remaining")).toBe(String(LIMIT - 1));
  });
});

describe("frozen database → 503, then recovery", () => {
  const frozenDb = frozenDatabaseServer("frozen-db", { TIDESYNC_DB_POOL_MAX: "4" });

  it("requests on pooled connections answer 503 UNAVAILABLE with Retry-After while the database does not answer; afterwards every request succeeds", async () => {
    const users = await Promise.all([1, 2, 3, 4].map(() => createTestUser()));
    // Warm the pool: every connection goes through the proxy.
    for (const user of users) expect((await call("/v1/whoami", { token: user.token, baseUrl: frozenDb.apiUrl() })).status).toBe(200);

    frozenDb.proxy().pause();
    let whileFrozen;
    try {
      // Without a client-side bound these never answer while the proxy holds the bytes.
      whileFrozen = await Promise.all(users.map((user) => call("/v1/whoami", { token: user.token, baseUrl: frozenDb.apiUrl() })));
    } finally {
      frozenDb.proxy().resume();
    }
    for (const response of whileFrozen) {
      const error = expectEnvelope(response, 503, "UNAVAILABLE");
      expect(error.retryable).toBe(true);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    }

    // No connection stays poisoned: more requests than the pool has connections, all served.
    const after = await Promise.all([...users, ...users, ...users].map((user) => call("/v1/whoami", { token: user.token, baseUrl: frozenDb.apiUrl() })));
    expect(after.map((r) => r.status)).toEqual(after.map(() => 200));
  });
});

describe("frozen database: the routes without a database still answer", () => {
  const frozenDb = frozenDatabaseServer("frozen-db-meta", { TIDESYNC_DB_POOL_MAX: "2", TIDESYNC_CONCURRENT_REQUESTS: "2" });

  it("GET /v1/openapi.json answers while every admission slot waits on the database; GET /v1/meta (the database's clock) answers 503 UNAVAILABLE, not another clock", async () => {
    const users = await Promise.all([1, 2].map(() => createTestUser()));
    for (const user of users) expect((await call("/v1/whoami", { token: user.token, baseUrl: frozenDb.apiUrl() })).status).toBe(200);

    frozenDb.proxy().pause();
    try {
      let settled = 0;
      // Both slots taken by requests that wait for the frozen database (503 after the statement timeout + 1 s).
      const waiting = users.map((user) => call("/v1/whoami", { token: user.token, baseUrl: frozenDb.apiUrl() }).finally(() => settled++));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const meta = call("/v1/meta", { baseUrl: frozenDb.apiUrl() });
      const openapi = await call("/v1/openapi.json", { baseUrl: frozenDb.apiUrl() });
      expect(openapi.status).toBe(200);
      expect(settled, "answered before the requests holding the slots").toBe(0);
      for (const response of await Promise.all(waiting)) expectEnvelope(response, 503, "UNAVAILABLE");
      // meta's server_time is the database's now(): with no database to ask, the documented envelope, within the bound.
      const error = expectEnvelope(await meta, 503, "UNAVAILABLE");
      expect(error.retryable).toBe(true);
      expect(Number((await meta).headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      frozenDb.proxy().resume();
    }
  });
});

describe("banned and soft-deleted users are signed out", () => {
  it("banned_until in the future → 401 on every authenticated route; a ban that has ended → 200 again", async () => {
    const user = await createTestUser();
    await adminSql`update auth.users set banned_until = now() + interval '1 hour' where id = ${user.userId}`;
    expectEnvelope(await call("/v1/whoami", { token: user.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/sync/changes", { token: user.token }), 401, "UNAUTHENTICATED");

    await adminSql`update auth.users set banned_until = now() - interval '1 minute' where id = ${user.userId}`;
    expect((await call("/v1/whoami", { token: user.token })).status).toBe(200);
  });

  it("deleted_at set (soft delete) → 401", async () => {
    const user = await createTestUser();
    await adminSql`update auth.users set deleted_at = now() where id = ${user.userId}`;
    expectEnvelope(await call("/v1/whoami", { token: user.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/users/me/notifications", { token: user.token }), 401, "UNAUTHENTICATED");
  });
});

describe("oversized request headers → 431 in the envelope", () => {
  it("a 40 KB token → 431 HEADERS_TOO_LARGE with a request id, on authenticated and public routes", async () => {
    // 40 KB: above our limit, below the Deno runtime's own (about 64 KiB for the whole request head).
    const huge = "a".repeat(40 * 1024);
    const half = huge.slice(0, 20 * 1024);
    const onWhoami = expectEnvelope(await call("/v1/whoami", { headers: { authorization: `Bearer ${half}.${half}.x` } }), 431, "HEADERS_TOO_LARGE");
    expect(onWhoami.retryable).toBe(false);
    expectEnvelope(await call("/v1/meta", { headers: { "x-padding": huge } }), 431, "HEADERS_TOO_LARGE");
  });

  it("the 431 carries the CORS headers every answer does, so a browser app can read it", async () => {
    const response = await call("/v1/meta", { headers: { origin: "https://app.example", "x-padding": "a".repeat(40 * 1024) } });
    expectEnvelope(response, 431, "HEADERS_TOO_LARGE");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")).toMatch(/X-Request-Id/i);
  });

  it("locally, more than 128 header lines, however small, get Deno's bare 400 (errors.md), not the envelope", async () => {
    const statusWith = (lines: number) => new Promise<string>((resolve, reject) => {
      const url = new URL(`${stack.apiUrl}/v1/meta`);
      // Host and Connection, and the rest one-byte headers.
      const extra = Array.from({ length: lines - 2 }, (_, i) => `x-h${i}: a\r\n`).join("");
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n${extra}Connection: close\r\n\r\n`));
      let received = "";
      socket.on("data", (d) => (received += d));
      socket.on("end", () => resolve(received.slice(0, received.indexOf("\r\n\r\n"))));
      socket.on("error", reject);
    });
    expect(await statusWith(128)).toMatch(/^HTTP\/1\.1 200 /);
    const refused = await statusWith(129);
    expect(refused).toMatch(/^HTTP\/1\.1 400 /);
    expect(refused).not.toMatch(/x-request-id/i);
  });

  it("ordinary headers are untouched", async () => {
    const user = await createTestUser();
    expect((await call("/v1/whoami", { token: user.token, headers: { "x-padding": "a".repeat(4096) } })).status).toBe(200);
  });
});

describe("a trailing slash names the same route", () => {
  it("GET, POST, PUT and DELETE answer the same with and without a trailing slash", async () => {
    const user = await createTestUser();
    for (const path of ["/v1/meta", "/v1/whoami", "/v1/devices", "/v1/sync/changes", "/v1/users/me/notifications"]) {
      const plain = await call(path, { token: user.token });
      const slashed = await call(`${path}/`, { token: user.token });
      expect({ path, status: slashed.status }).toEqual({ path, status: plain.status });
      expect(plain.status).toBe(200);
    }
    const batch = { ops: [{ op_id: crypto.randomUUID(), collection: "lists", record_id: crypto.randomUUID(), type: "upsert", base_version: null, data: { title: "slash" } }] };
    const pushed = await call("/v1/sync/batch/", { method: "POST", token: user.token, body: batch });
    expect(pushed.status).toBe(200);
    expect(pushed.body.results[0].status).toBe("applied");
    expectEnvelope(await call(`/v1/devices/${crypto.randomUUID()}/`, { method: "DELETE", token: user.token }), 404, "NOT_FOUND");
  });

  it("a wrong method with a trailing slash → 405 with Allow, like without", async () => {
    const response = await call("/v1/whoami/", { method: "POST", body: {} });
    expectEnvelope(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET");
  });

  it("two trailing slashes are no route: 404 for every method, never a 405 that allows the method just used", async () => {
    const user = await createTestUser();
    for (const path of ["/v1/meta//", "/v1/whoami//", "/v1/devices//", "/v1/sync/changes//", "/v1/users/me/notifications///"]) {
      const response = await call(path, { token: user.token });
      expect({ path, status: response.status, allow: response.headers.get("allow") }).toEqual({ path, status: 404, allow: null });
      expectEnvelope(response, 404, "NOT_FOUND");
    }
    expectEnvelope(await call("/v1/sync/batch//", { method: "POST", token: user.token, body: { ops: [] } }), 404, "NOT_FOUND");
    expectEnvelope(await call("/v1/whoami//", { method: "POST", body: {} }), 404, "NOT_FOUND");
  });
});
