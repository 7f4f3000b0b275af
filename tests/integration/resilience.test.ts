// What a client sees when the database is gone or too slow (503 UNAVAILABLE,
// retryable, Retry-After) and when it sends too much (429 RATE_LIMITED with
// Retry-After and RateLimit-* headers, counted in Postgres so every function
// instance shares the budget). Each case starts its own functions server
// with other settings, next to the suite's stack.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { type FunctionsServer, freePort, startFunctionsServer } from "../support/functions-server.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { logLine } from "../support/request-log.ts";
import { push, pushOk, upsert } from "../support/shared-lists.ts";

const started: FunctionsServer[] = [];
async function server(name: string, env: Record<string, string>): Promise<FunctionsServer> {
  const s = await startFunctionsServer({ ...stack.functionsEnv, ...env }, { name: `${stack.database}-${name}` });
  started.push(s);
  return s;
}

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe("database unavailable → 503", () => {
  let deadDb: FunctionsServer;
  let slowDb: FunctionsServer;
  let readOnlyDb: FunctionsServer;
  let refusedLogin: FunctionsServer;
  let noSuchDatabase: FunctionsServer;

  beforeAll(async () => {
    const closedPort = await freePort();
    const readOnlyUrl = new URL(stack.ownerDbUrl);
    // Every transaction of its connections read-only, as in Supabase's read-only mode (a full disk) or on a standby.
    readOnlyUrl.searchParams.set("default_transaction_read_only", "on");
    const wrongUser = new URL(stack.ownerDbUrl);
    wrongUser.username = "no_such_role";
    const wrongDatabase = new URL(stack.ownerDbUrl);
    wrongDatabase.pathname = "/no_such_database";
    [deadDb, slowDb, readOnlyDb, refusedLogin, noSuchDatabase] = await Promise.all([
      server("dead-db", {
        SUPABASE_DB_URL: `postgres://tidesync_owner@127.0.0.1:${closedPort}/nowhere`,
        TIDESYNC_DB_CONNECT_TIMEOUT_S: "2",
      }),
      server("slow-db", { TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "300" }),
      server("read-only-db", { SUPABASE_DB_URL: readOnlyUrl.href }),
      server("refused-login", { SUPABASE_DB_URL: wrongUser.href }),
      server("no-such-database", { SUPABASE_DB_URL: wrongDatabase.href }),
    ]);
  });

  // Each answered 500 INTERNAL, logged as an "unhandled error" with the stack (28000 / 3D000): a setting to fix,
  // which no client retry can get past until it is fixed, so the log line says which one.
  it("a database that refuses the login (unknown role) or has no such database → 503 UNAVAILABLE, logged as SUPABASE_DB_URL to check", async () => {
    const user = await createTestUser();
    for (const server of [refusedLogin, noSuchDatabase]) {
      const response = await call("/v1/whoami", { token: user.token, baseUrl: server.apiUrl });
      const error = expectEnvelope(response, 503, "UNAVAILABLE");
      expect(error.retryable).toBe(true);
      expect(response.text).not.toMatch(/no_such|password|role|database "/);
      const line = await logLine(server.logFile, (_, raw) => raw.includes(error.request_id), `log line of ${error.request_id}`);
      expect(line).toMatchObject({ level: "error", msg: "the database refused the function's login: check SUPABASE_DB_URL" });
    }
  });

  it("nothing listening at SUPABASE_DB_URL → 503 UNAVAILABLE, retryable, with Retry-After, nothing leaked", async () => {
    const user = await createTestUser();
    const response = await call("/v1/whoami", { token: user.token, baseUrl: deadDb.apiUrl });
    const error = expectEnvelope(response, 503, "UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(response.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|nowhere/);
  });

  it("the OpenAPI document, which needs no database, still answers while it is down; GET /v1/meta (the database's clock) is 503 UNAVAILABLE", async () => {
    expect((await call("/v1/openapi.json", { baseUrl: deadDb.apiUrl })).status).toBe(200);
    // Its server_time is the database's now(): no other clock stands in for it (docs/errors.md, "server_time").
    const meta = await call("/v1/meta", { baseUrl: deadDb.apiUrl });
    const error = expectEnvelope(meta, 503, "UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(Number(meta.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(meta.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|nowhere/);
  });

  // Each answered 500 INTERNAL, logged as an "unhandled error" (25006, read_only_sql_transaction): even a
  // read, whose rate-limit counter is a write.
  it("a read-only database → 503 UNAVAILABLE, retryable, with Retry-After, on reads and writes alike", async () => {
    const user = await createTestUser();
    const answers = {
      whoami: await call("/v1/whoami", { token: user.token, baseUrl: readOnlyDb.apiUrl }),
      pull: await call("/v1/sync/changes", { token: user.token, baseUrl: readOnlyDb.apiUrl }),
      push: await push(user, { ops: [upsert("lists", randomUUID(), { title: "read-only" })] }, readOnlyDb.apiUrl),
    };
    for (const [route, response] of Object.entries(answers)) {
      const error = expectEnvelope(response, 503, "UNAVAILABLE");
      expect(error.retryable, route).toBe(true);
      expect(Number(response.headers.get("retry-after")), route).toBeGreaterThan(0);
      expect(response.text, route).not.toMatch(/read-only|25006/);
    }
    expect(await readFile(readOnlyDb.logFile, "utf8")).not.toMatch(/unhandled error/);
  });

  it("a statement that exceeds the statement timeout (blocked by a lock) → 503, and the retry succeeds", async () => {
    const user = await createTestUser();
    // Hold the user's row: the request's first write (its rate-limit counter,
    // whose foreign key locks that row) waits until the statement timeout.
    const blocked = await adminSql.begin(async (tx) => {
      await tx`select 1 from auth.users where id = ${user.userId} for update`;
      return await call("/v1/whoami", { token: user.token, baseUrl: slowDb.apiUrl });
    });
    const error = expectEnvelope(blocked, 503, "UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(blocked.text).not.toMatch(/statement timeout|canceling/i);

    const retried = await call("/v1/whoami", { token: user.token, baseUrl: slowDb.apiUrl });
    expect(retried.status).toBe(200);
    expect(retried.body.user_id).toBe(user.userId);
  });
});

describe("a request past its client-side bound → 503 for it alone", () => {
  let slowPush: FunctionsServer;

  beforeAll(async () => {
    // Bound: 3 s + CLIENT_TIMEOUT_GRACE_MS (1 s).
    slowPush = await server("slow-push", { TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "3000" });
  });

  it("a push whose statements each finish within the statement timeout but together pass the bound → 503 and nothing kept; another user's push in flight on the same worker → 200 and committed", async () => {
    const [a, c] = await Promise.all([createTestUser(), createTestUser()]);
    const listA = randomUUID(), taskX = randomUUID(), listC = randomUUID(), taskY = randomUUID();
    const createdA = await pushOk(a, { ops: [upsert("lists", listA, { title: "A" }), upsert("tasks", taskX, { list_id: listA, title: "x" })] }, slowPush.apiUrl);
    const createdC = await pushOk(c, { ops: [upsert("lists", listC, { title: "C" })] }, slowPush.apiUrl);

    // A's push waits for two row locks in turn: about 2 s for the list (a push takes the lists it writes
    // into first), then for the task until its bound.
    const taskLock = holdTransaction((tx) => tx`select 1 from public.tasks where id = ${taskX} for update`);
    const listLock = holdTransaction((tx) => tx`select 1 from public.lists where id = ${listA} for update`);
    await Promise.all([taskLock.ran, listLock.ran]);
    const pushA = push(a, {
      ops: [upsert("tasks", taskX, { title: "x2" }, createdA.results[1].record!.version), upsert("tasks", taskY, { list_id: listA, title: "y" })],
    }, slowPush.apiUrl);
    await waitersOf(await listLock.pid);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    listLock.commit();
    await waitersOf(await taskLock.pid);

    // C's push waits for a lock of its own while A's bound fires, well within C's own limits.
    const listCLock = holdTransaction((tx) => tx`select 1 from public.lists where id = ${listC} for update`);
    await listCLock.ran;
    const pushC = push(c, { ops: [upsert("lists", listC, { title: "C2" }, createdC.results[0].record!.version)] }, slowPush.apiUrl);
    await waitersOf(await listCLock.pid);

    const answerA = await pushA;
    listCLock.commit();
    const answerC = await pushC;
    taskLock.commit();
    await Promise.all([taskLock.done, listLock.done, listCLock.done]);

    const error = expectEnvelope(answerA, 503, "UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(answerC.status).toBe(200);
    expect(answerC.body.results[0].status).toBe("applied");
    // A's transaction rolled back; C's committed.
    expect((await adminSql`select title from public.tasks where id = ${taskX}`)[0].title).toBe("x");
    expect(await adminSql`select 1 from public.tasks where id = ${taskY}`).toHaveLength(0);
    expect((await adminSql`select title from public.lists where id = ${listC}`)[0].title).toBe("C2");
  });
});

describe("rate limits → 429", () => {
  const LIMIT = 2;
  const WINDOW = 86_400; // a day: no window boundary falls inside the test
  let a: FunctionsServer;
  let b: FunctionsServer;

  beforeAll(async () => {
    const env = { TIDESYNC_RATE_LIMITS: JSON.stringify({ "auth.session": { limit: LIMIT, window_seconds: WINDOW } }) };
    [a, b] = await Promise.all([server("rate-a", env), server("rate-b", env)]);
  });

  it("counts across function instances; the request over the budget → 429 with Retry-After and RateLimit-*", async () => {
    const user = await createTestUser();
    const first = await call("/v1/whoami", { token: user.token, baseUrl: a.apiUrl });
    const second = await call("/v1/whoami", { token: user.token, baseUrl: b.apiUrl });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get("ratelimit-limit")).toBe(String(LIMIT));
    expect(first.headers.get("ratelimit-remaining")).toBe("1");
    expect(second.headers.get("ratelimit-remaining")).toBe("0");
    expect(first.headers.get("ratelimit-policy")).toBe(`${LIMIT};w=${WINDOW}`);

    const third = await call("/v1/whoami", { token: user.token, baseUrl: a.apiUrl });
    const error = expectEnvelope(third, 429, "RATE_LIMITED");
    expect(error.retryable).toBe(true);
    const retryAfter = Number(third.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW);
    expect(third.headers.get("ratelimit-limit")).toBe(String(LIMIT));
    expect(third.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(third.headers.get("ratelimit-reset"))).toBe(retryAfter);
  });

  it("another user keeps a budget of their own", async () => {
    const busy = await createTestUser();
    const other = await createTestUser();
    for (let i = 0; i <= LIMIT; i++) await call("/v1/whoami", { token: busy.token, baseUrl: a.apiUrl });
    expect((await call("/v1/whoami", { token: busy.token, baseUrl: a.apiUrl })).status).toBe(429);
    expect((await call("/v1/whoami", { token: other.token, baseUrl: a.apiUrl })).status).toBe(200);
  });

  it("the CORS preflight exposes the rate-limit headers to browsers", async () => {
    const response = await fetch(`${a.apiUrl}/v1/whoami`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:3000", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(response.status).toBeLessThan(300);
    const user = await createTestUser();
    const get = await fetch(`${a.apiUrl}/v1/whoami`, { headers: { origin: "http://localhost:3000", authorization: `Bearer ${user.token}` } });
    expect(get.headers.get("access-control-expose-headers")).toMatch(/Retry-After/i);
    expect(get.headers.get("access-control-expose-headers")).toMatch(/RateLimit-Remaining/i);
  });
});
