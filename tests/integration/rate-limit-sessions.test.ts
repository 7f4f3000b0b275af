// Sync budgets are per device session (issue 13): a user's devices each sync
// within their own sync.batch / sync.pull budget instead of throttling each
// other; the session and device budgets are per session too, so a lost phone
// cannot spend what its owner needs to sign it out (or to cancel a deletion
// it asked for). Per-user budgets (e.g.
// notifications) stay shared by every session of the user. A per-session
// budget may also cap the user's total across their sessions (user_limit: the
// sync budgets by default), so more sessions do not mean more sync. Counted in
// Postgres, so two function instances agree.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { phone } from "../support/device-sessions.ts";
import { upsert } from "../support/shared-lists.ts";

const LIMIT = 2;
const USER_LIMIT = 3;
const WINDOW = 86_400; // a day: no window boundary falls inside the test
let a: FunctionsServer;
let b: FunctionsServer;

beforeAll(async () => {
  const env = {
    ...stack.functionsEnv,
    TIDESYNC_RATE_LIMITS: JSON.stringify({
      "sync.batch": { limit: LIMIT, window_seconds: WINDOW },
      "sync.pull": { limit: LIMIT, window_seconds: WINDOW, user_limit: USER_LIMIT },
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

    // The two sessions' counters, and the user's total (the nil session): the push the phone's own
    // budget refused is not in it.
    const [counters] = await adminSql<{ sessions: number; total: number }[]>`
      select count(distinct session_id) filter (where session_id <> '00000000-0000-0000-0000-000000000000')::integer as sessions,
             sum(hits) filter (where session_id = '00000000-0000-0000-0000-000000000000')::integer as total
        from app_private.rate_limit_counters
       where user_id = ${user.userId} and operation = 'sync.batch'`;
    expect(counters).toEqual({ sessions: 2, total: 3 });
  });

  it("GET /v1/meta publishes each budget, whose it is and the ceiling on the user's total", async () => {
    const meta = await call("/v1/meta", { baseUrl: a.apiUrl });
    expect(meta.body.rate_limits).toEqual({
      // An override without user_limit keeps the default's ceiling.
      "sync.batch": { limit: LIMIT, window_seconds: WINDOW, per: "session", user_limit: 900 },
      "sync.pull": { limit: LIMIT, window_seconds: WINDOW, per: "session", user_limit: USER_LIMIT },
      "notifications": { limit: LIMIT, window_seconds: WINDOW, per: "user" },
      "auth.session": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "devices": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "account.deletion": { limit: LIMIT, window_seconds: WINDOW, per: "session" },
      "releases": { limit: 120, window_seconds: 60, per: "user" },
      "account.export": { limit: 3, window_seconds: 3600, per: "user" },
    });
  });

  // The contract's 429 is per user: with per-session budgets alone, one account with N sessions pulled
  // N times its budget (reproduced: sync.pull 1 an hour, 3 sessions, 3 pulls), and each sign-in added one.
  it("a user's sessions together stop at the user's ceiling; a session's own budget still binds it alone", async () => {
    const user = await createTestUser();
    const [b1, b2, c1] = [await user.newSession(), await user.newSession(), await user.newSession()];
    const pull = (token: string, baseUrl: string) => call("/v1/sync/changes", { token, baseUrl });
    const policy = `${LIMIT};w=${WINDOW}, ${USER_LIMIT};w=${WINDOW}`;

    // A signed-out session is refused before it spends anything, the user's total included.
    expect((await call("/v1/auth/session", { method: "DELETE", token: c1.token, baseUrl: a.apiUrl })).status).toBe(204);
    expectEnvelope(await pull(c1.token, b.apiUrl), 401, "UNAUTHENTICATED");

    // Session A spends its own budget; the headers tell the binding budget (the smaller remaining).
    const a1 = await pull(user.token, a.apiUrl);
    expect(a1.status, a1.text).toBe(200);
    expect([a1.headers.get("ratelimit-limit"), a1.headers.get("ratelimit-remaining")]).toEqual([String(LIMIT), "1"]);
    expect(a1.headers.get("ratelimit-policy")).toBe(policy);
    const a2 = await pull(user.token, b.apiUrl);
    expect([a2.status, a2.headers.get("ratelimit-remaining")]).toEqual([200, "0"]);
    const a3 = await pull(user.token, a.apiUrl);
    const own = expectEnvelope(a3, 429, "RATE_LIMITED");
    expect(a3.headers.get("ratelimit-limit")).toBe(String(LIMIT));
    expect(own.message).not.toContain("all your sessions"); // this session's budget, not the user's
    // A request its own session's budget refuses spends none of the user's: B still gets the third.
    const fromB = await pull(b1.token, b.apiUrl);
    expect(fromB.status, fromB.text).toBe(200);
    expect([fromB.headers.get("ratelimit-limit"), fromB.headers.get("ratelimit-remaining")]).toEqual([String(USER_LIMIT), "0"]);
    expect(fromB.headers.get("ratelimit-policy")).toBe(policy);

    // The user's 3 are spent: B (1 of its own 2 left) and a fresh session C are refused, on either instance.
    for (const [token, baseUrl] of [[b1.token, a.apiUrl], [b2.token, b.apiUrl]]) {
      const over = await pull(token, baseUrl);
      // the message says which budget ran out: the user's, shared by their sessions
      expect(expectEnvelope(over, 429, "RATE_LIMITED").message).toContain("from all your sessions together");
      expect([over.headers.get("ratelimit-limit"), over.headers.get("ratelimit-remaining")]).toEqual([String(USER_LIMIT), "0"]);
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Pushes have budgets of their own; another user's pulls are untouched.
    expect((await pushOne(b2.token, user, a.apiUrl)).status).toBe(200);
    const other = await createTestUser();
    expect((await pull(other.token, a.apiUrl)).status).toBe(200);
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
