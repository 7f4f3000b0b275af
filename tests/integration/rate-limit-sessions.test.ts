// Sync budgets are per device session (issue 13): a user's devices each sync
// within their own sync.batch / sync.pull budget instead of throttling each
// other; the session and device budgets are per session too, so a lost phone
// cannot spend what its owner needs to sign it out (or to cancel a deletion
// it asked for). Per-user budgets (e.g.
// notifications) stay shared by every session of the user. Counted in
// Postgres, so two function instances agree.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { phone } from "../support/device-sessions.ts";
import { upsert } from "../support/shared-lists.ts";

const LIMIT = 2;
const WINDOW = 86_400; // a day: no window boundary falls inside the test
let a: FunctionsServer;
let b: FunctionsServer;

beforeAll(async () => {
  const env = {
    ...stack.functionsEnv,
    TIDESYNC_RATE_LIMITS: JSON.stringify({
      "sync.batch": { limit: LIMIT, window_seconds: WINDOW },
      "sync.pull": { limit: LIMIT, window_seconds: WINDOW },
      "notifications": { limit: LIMIT, window_seconds: WINDOW },
      "devices": { limit: LIMIT, window_seconds: WINDOW },
      "auth.session": { limit: LIMIT, window_seconds: WINDOW },
      "account.deletion": { limit: LIMIT, window_seconds: WINDOW },
    }),
  };
  [a, b] = await Promise.all([
    startFunctionsServer(env, { name: `${stack.database}-session-rate-a` }),
    startFunctionsServer(env, { name: `${stack.database}-session-rate-b` }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

const pushOne = (token: string, user: { userId: string }, baseUrl: string) =>
  call("/v1/sync/batch", { method: "POST", token, baseUrl, body: { ops: [upsert("tasks", randomUUID(), { list_id: user.userId, title: "t" })] } });

describe("sync rate limits per device session", () => {
  it("a phone that spent its sync.batch budget gets 429; the same user's tablet still pushes, on either instance", async () => {
    const user = await createTestUser();
    const tablet = await user.newSession();
    const spent = [await pushOne(user.token, user, a.apiUrl), await pushOne(user.token, user, b.apiUrl)];
    expect(spent.map((r) => r.status)).toEqual([200, 200]);
    expect(spent[1].headers.get("ratelimit-remaining")).toBe("0");
    const over = await pushOne(user.token, user, a.apiUrl);
    expectEnvelope(over, 429, "RATE_LIMITED");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);

    const fromTablet = await pushOne(tablet.token, user, b.apiUrl);
    expect(fromTablet.status, fromTablet.text).toBe(200);
    expect(fromTablet.headers.get("ratelimit-remaining")).toBe(String(LIMIT - 1));
    // Pulls have a budget of their own, per session too.
    expect((await call("/v1/sync/changes", { token: user.token, baseUrl: a.apiUrl })).status).toBe(200);

    const [counters] = await adminSql<{ sessions: number }[]>`
      select count(distinct session_id)::integer as sessions from app_private.rate_limit_counters
       where user_id = ${user.userId} and operation = 'sync.batch'`;
    expect(counters.sessions).toBe(2);
  });

  it("GET /v1/meta publishes each budget and whose it is", async () => {
    const meta = await call("/v1/meta", { baseUrl: a.apiUrl });
    expect(meta.body.rate_limits).toMatchObject({
      "sync.batch": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "sync.pull": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "notifications": { limit: LIMIT, window_seconds: WINDOW, per: "user" },
      "auth.session": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "devices": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "account.deletion": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
    });
  });

  it("a per-user budget (notifications) stays shared by all the user's sessions", async () => {
    const user = await createTestUser();
    const tablet = await user.newSession();
    expect((await call("/v1/users/me/notifications", { token: user.token, baseUrl: a.apiUrl })).status).toBe(200);
    expect((await call("/v1/users/me/notifications", { token: tablet.token, baseUrl: b.apiUrl })).status).toBe(200);
    expectEnvelope(await call("/v1/users/me/notifications", { token: tablet.token, baseUrl: a.apiUrl }), 429, "RATE_LIMITED");
  });

  it("a lost phone that spent its devices and auth.session budgets cannot stop its owner signing it out from another phone", async () => {
    const owner = await createTestUser();
    const lost = await owner.newSession();
    const registered = await call("/v1/auth/session", { method: "POST", token: lost.token, baseUrl: a.apiUrl, body: { device: phone() } });
    expect(registered.status, registered.text).toBe(201);
    // The lost phone polls both budgets empty, on either instance.
    for (const path of ["/v1/devices", "/v1/whoami"]) {
      for (let i = 0; i < LIMIT; i++) await call(path, { token: lost.token, baseUrl: b.apiUrl });
      expectEnvelope(await call(path, { token: lost.token, baseUrl: a.apiUrl }), 429, "RATE_LIMITED");
    }

    expect((await call("/v1/devices", { token: owner.token, baseUrl: a.apiUrl })).status).toBe(200);
    const signOut = await call(`/v1/devices/${registered.body.device.id}`, { method: "DELETE", token: owner.token, baseUrl: b.apiUrl });
    expect(signOut.status, signOut.text).toBe(204);
    expectEnvelope(await call("/v1/devices", { token: lost.token, baseUrl: a.apiUrl }), 401, "UNAUTHENTICATED");

    // A new phone signs in and the owner signs out of it: its own auth.session budget.
    const newPhone = await owner.newSession();
    expect((await call("/v1/auth/session", { method: "POST", token: newPhone.token, baseUrl: a.apiUrl, body: { device: phone() } })).status).toBe(201);
    expect((await call("/v1/auth/session", { method: "DELETE", token: newPhone.token, baseUrl: b.apiUrl })).status).toBe(204);
  });

  it("a lost phone that spent its account.deletion budget cannot stop its owner cancelling the deletion it asked for", async () => {
    const owner = await createTestUser();
    const lost = await owner.newSession();
    // The lost phone asks for the deletion (every other session is signed out) and polls the budget empty.
    const asked = await call("/v1/users/me/deletion", { method: "POST", token: lost.token, baseUrl: a.apiUrl, body: { confirm: "delete my account" } });
    expect(asked.status, asked.text).toBe(202);
    await call("/v1/users/me/deletion", { token: lost.token, baseUrl: b.apiUrl });
    expectEnvelope(await call("/v1/users/me/deletion", { token: lost.token, baseUrl: a.apiUrl }), 429, "RATE_LIMITED");

    // The owner signs in again and cancels, within the new session's own budget.
    const again = await owner.newSession();
    expect((await call("/v1/users/me/deletion", { token: again.token, baseUrl: b.apiUrl })).body.status).toBe("scheduled");
    expect((await call("/v1/users/me/deletion", { method: "DELETE", token: again.token, baseUrl: a.apiUrl })).status).toBe(204);
    expect((await call("/v1/users/me/deletion", { token: again.token, baseUrl: b.apiUrl })).status).toBe(429);
  });
});
