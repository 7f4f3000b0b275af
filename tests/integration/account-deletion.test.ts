// Account deletion through real Deno and Postgres: POST/GET/DELETE
// /v1/users/me/deletion and what the grace period allows, then the purge
// run as the owner role with the command pg_cron runs on hosted Supabase
// (the DO block of `app_private.purge_run_command()`; two overlapping runs: the
// one-transaction form, app_private.run_account_deletions, holds the first): not before the grace period, once after it,
// a no-op the second time, once when two runs overlap; and afterwards every
// token of the user is refused. The grace period passes by moving the
// request's dates back (the purge's own clock stays now(): other test files'
// pending requests are never due).
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { deletionScheduledResponseSchema, deletionStateResponseSchema } from "../../functions/_shared/schemas/account-deletion.ts";
import { metaResponseSchema } from "../../functions/_shared/schemas/meta.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { deviceRow, phone, pushToken, startSession } from "../support/device-sessions.ts";
import { runPurgeBlock } from "../support/account-purge.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { pushOk, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`, not a superuser): what pg_cron runs the purge as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 3, onnotice: () => {} });
afterAll(async () => {
  await ownerSql.end({ timeout: 5 });
});

const CONFIRM = { confirm: "delete my account" };

async function requestDeletion(token: string) {
  const response = await call("/v1/users/me/deletion", { method: "POST", token, body: CONFIRM });
  expect(response.status, response.text).toBe(202);
  return deletionScheduledResponseSchema.parse(response.body);
}

async function deletionState(token: string) {
  const response = await call("/v1/users/me/deletion", { token });
  expect(response.status, response.text).toBe(200);
  return deletionStateResponseSchema.parse(response.body);
}

/** The grace period is over: the request's dates move back past it. */
async function endGracePeriod(user: TestUser): Promise<void> {
  await adminSql`
    update app_private.account_deletion_requests
       set requested_at = requested_at - interval '30 days', scheduled_for = now() - interval '1 second'
     where user_id = ${user.userId}`;
}

async function requestIdOf(user: TestUser): Promise<string> {
  const [row] = await adminSql<{ request_id: string }[]>`select request_id from app_private.account_deletion_requests where user_id = ${user.userId}`;
  return row.request_id;
}

async function auditEvents(requestId: string): Promise<string[]> {
  const rows = await adminSql<{ event: string }[]>`select event from app_private.account_deletion_audit where request_id = ${requestId} order by id`;
  return rows.map((r) => r.event);
}

async function userExists(user: TestUser): Promise<boolean> {
  const [row] = await adminSql<{ n: number }[]>`select count(*)::int as n from auth.users where id = ${user.userId}`;
  return row.n === 1;
}

/** pg_cron's command: one transaction per account. */
async function purge(): Promise<void> {
  await runPurgeBlock(ownerSql);
}

/** The same purge in the caller's transaction (held open by a test); how many users it deleted. */
async function purgeIn(tx: postgres.TransactionSql): Promise<number> {
  const [row] = await tx<{ users_deleted: number }[]>`select users_deleted from app_private.run_account_deletions()`;
  return row.users_deleted;
}

/** A user with a list, tasks and a device with a push token: what "nothing lost" is checked against. */
async function userWithData() {
  const user = await createTestUser();
  const listId = randomUUID();
  await pushOk(user, { ops: [
    upsert("lists", listId, { title: "Keep me" }),
    upsert("tasks", randomUUID(), { list_id: listId, title: "First" }),
    upsert("tasks", randomUUID(), { list_id: listId, title: "Second" }),
  ] });
  return { user, listId };
}

async function holdings(user: TestUser) {
  const [row] = await adminSql<{ lists: number; tasks: number; profile: number; devices: number }[]>`
    select (select count(*)::int from public.lists where created_by = ${user.userId}) as lists,
           (select count(*)::int from public.tasks where created_by = ${user.userId}) as tasks,
           (select count(*)::int from public.profiles where id = ${user.userId}) as profile,
           (select count(*)::int from app_private.devices where user_id = ${user.userId}) as devices`;
  return row;
}

describe("POST /v1/users/me/deletion", () => {
  it("202 with scheduled_for the published grace period away; every other session is signed out at once, push tokens cleared", async () => {
    const { user } = await userWithData();
    const other = await user.newSession();
    const here = await startSession(user.token, phone({ push_token: pushToken(), push_provider: "apns" }));
    const there = await startSession(other.token, phone({ platform: "android", push_token: pushToken(), push_provider: "fcm" }));

    const meta = metaResponseSchema.parse((await call("/v1/meta")).body);
    expect(meta.limits.account_deletion_grace_days).toBe(7);
    const scheduled = await requestDeletion(user.token);
    expect(scheduled.status).toBe("scheduled");
    expect(Date.parse(scheduled.scheduled_for) - Date.parse(scheduled.requested_at)).toBe(7 * 86_400_000);

    expectEnvelope(await call("/v1/devices", { token: other.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/users/me/deletion", { token: other.token }), 401, "UNAUTHENTICATED");
    const state = await deletionState(user.token);
    expect(state).toMatchObject({ status: "scheduled", scheduled_for: scheduled.scheduled_for, requested_at: scheduled.requested_at });
    expect(await deviceRow(here.body.device.id)).toMatchObject({ push_token: null, revoked_at: null });
    expect(await deviceRow(there.body.device.id)).toMatchObject({ push_token: null, session_id: null });

    // Asking again keeps the date.
    expect((await requestDeletion(user.token)).scheduled_for).toBe(scheduled.scheduled_for);
  });

  it("two sessions requesting at the same moment: one answers 202 and stays signed in, the other was signed out by it (401)", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    // Both pass the session check, then wait for the user's device lock, held here.
    const held = holdTransaction((tx) => tx`select pg_advisory_xact_lock(hashtextextended(${"tidesync.user_devices:" + user.userId}, 0))`);
    await held.ran;
    const requests = [user.token, other.token].map((token) => call("/v1/users/me/deletion", { method: "POST", token, body: CONFIRM }));
    await waitersOf(await held.pid, 2);
    held.commit();
    const answers = await Promise.all(requests);

    expect(answers.map((a) => a.status).sort()).toEqual([202, 401]);
    expectEnvelope(answers.find((a) => a.status === 401)!, 401, "UNAUTHENTICATED");
    const kept = answers[0].status === 202 ? user.token : other.token;
    expect((await deletionState(kept)).status).toBe("scheduled");
    const [{ n }] = await adminSql<{ n: number }[]>`select count(*)::int as n from auth.sessions where user_id = ${user.userId}`;
    expect(n).toBe(1);
  });

  it("POST without a body, or with {}, schedules it as api-v1 says (the confirmation is optional)", async () => {
    const noBody = await createTestUser();
    const bare = await call("/v1/users/me/deletion", { method: "POST", token: noBody.token });
    expect(bare.status, bare.text).toBe(202);
    expect(deletionScheduledResponseSchema.parse(bare.body).status).toBe("scheduled");
    const emptyJson = await createTestUser();
    const empty = await call("/v1/users/me/deletion", { method: "POST", token: emptyJson.token, rawBody: "", headers: { "content-type": "application/json" } });
    expect(empty.status, empty.text).toBe(202);
    // Content-Length: 0 and no Content-Type (what curl -X POST -H "Content-Length: 0" sends).
    const zeroLength = await createTestUser();
    const zero = await call("/v1/users/me/deletion", { method: "POST", token: zeroLength.token, rawBody: new Uint8Array(0) });
    expect(zero.status, zero.text).toBe(202);
    const emptyObject = await createTestUser();
    expect((await call("/v1/users/me/deletion", { method: "POST", token: emptyObject.token, body: {} })).status).toBe(202);
    for (const user of [noBody, emptyJson, zeroLength, emptyObject]) expect((await deletionState(user.token)).status).toBe("scheduled");
  });

  it("400 when a confirmation is sent but is not the exact words; nothing is scheduled and no session is signed out", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    for (const body of [{ confirm: "" }, { confirm: true }, { confirm: "yes" }, { confirm: "Delete my account" }, { confirm: "delete my account", extra: 1 }, { extra: 1 }]) {
      expectEnvelope(await call("/v1/users/me/deletion", { method: "POST", token: user.token, body }), 400, "VALIDATION_FAILED");
    }
    expectEnvelope(await call("/v1/users/me/deletion", { method: "POST", token: user.token, rawBody: "{", headers: { "content-type": "application/json" } }), 400, "MALFORMED_JSON");
    expectEnvelope(await call("/v1/users/me/deletion", { method: "POST", token: user.token, rawBody: JSON.stringify(CONFIRM), headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    expect((await deletionState(user.token)).status).toBe("none");
    expect((await call("/v1/devices", { token: other.token })).status).toBe(200);
  });

  it("401 without a token, 405 for another method", async () => {
    expectEnvelope(await call("/v1/users/me/deletion", { method: "POST", body: CONFIRM }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/users/me/deletion"), 401, "UNAUTHENTICATED");
    const wrong = await call("/v1/users/me/deletion", { method: "PUT", body: CONFIRM });
    expectEnvelope(wrong, 405, "METHOD_NOT_ALLOWED");
  });
});

describe("the grace period", () => {
  it("a new sign-in sees the pending deletion, gets no push token, and can cancel: state none, nothing lost", async () => {
    const { user } = await userWithData();
    await startSession(user.token, phone());
    const before = await holdings(user);
    await requestDeletion(user.token);
    const requestId = await requestIdOf(user);

    const later = await user.newSession();
    const signIn = await startSession(later.token, phone({ push_token: pushToken(), push_provider: "apns" }));
    expect(signIn.body.account_deletion).toMatchObject({ status: "scheduled" });
    expect(signIn.body.device.has_push_token).toBe(false);

    // Nothing is purged while the grace period runs.
    await purge();
    expect(await userExists(user)).toBe(true);

    expect((await call("/v1/users/me/deletion", { method: "DELETE", token: later.token })).status).toBe(204);
    expect(await deletionState(later.token)).toMatchObject({ status: "none", scheduled_for: null, requested_at: null });
    expect(await holdings(user)).toEqual({ ...before, devices: before.devices + 1 });
    expect(await auditEvents(requestId)).toEqual(["requested", "cancelled"]);

    // Notifications work again, and a purge after the old date leaves the account alone.
    const again = await startSession(later.token, phone({ installation_id: signIn.body.device.installation_id, push_token: pushToken(), push_provider: "apns" }));
    expect(again.body.device.has_push_token).toBe(true);
    expect(again.body.account_deletion).toMatchObject({ status: "none" });
    await purge();
    expect(await userExists(user)).toBe(true);
    // Cancelling when nothing is scheduled is a no-op.
    expect((await call("/v1/users/me/deletion", { method: "DELETE", token: later.token })).status).toBe(204);
  });
});

describe("the purge (the DO block of app_private.purge_run_command, as the owner role)", () => {
  it("does nothing before the grace period, deletes after it, and a second run is a no-op; the user's tokens get 401", async () => {
    const { user } = await userWithData();
    const spare = await user.newSession();
    await requestDeletion(user.token);
    const requestId = await requestIdOf(user);

    await purge();
    expect(await userExists(user)).toBe(true);
    expect((await call("/v1/whoami", { token: user.token })).status).toBe(200);

    await endGracePeriod(user);
    await purge();
    expect(await userExists(user)).toBe(false);
    expect(await holdings(user)).toEqual({ lists: 0, tasks: 0, profile: 0, devices: 0 });
    expect(await auditEvents(requestId)).toEqual(["requested", "purged"]);

    await purge();
    expect(await auditEvents(requestId)).toEqual(["requested", "purged"]);

    for (const token of [user.token, spare.token, await user.tokenWith()]) {
      for (const path of ["/v1/whoami", "/v1/devices", "/v1/users/me/deletion", "/v1/sync/changes"]) {
        expectEnvelope(await call(path, { token }), 401, "UNAUTHENTICATED");
      }
    }
    const pushed = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops: [upsert("lists", randomUUID(), { title: "x" })] } });
    expectEnvelope(pushed, 401, "UNAUTHENTICATED");
  });

  it("two overlapping runs delete the account once: the second skips the request the first holds", async () => {
    const { user } = await userWithData();
    await requestDeletion(user.token);
    const requestId = await requestIdOf(user);
    await endGracePeriod(user);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let took!: (deleted: number) => void;
    const taken = new Promise<number>((resolve) => (took = resolve));
    const first = ownerSql.begin(async (tx) => {
      took(await purgeIn(tx));
      await held; // keeps its locks until the second run is done
    });
    // Wait until the first run has taken the request (the row is locked), however long it takes.
    const firstDeleted = await Promise.race([taken, first.then(() => -1)]);
    expect(firstDeleted).toBeGreaterThanOrEqual(1);

    await purge(); // runs while the first still holds its transaction
    release();
    await first;

    expect(await userExists(user)).toBe(false);
    expect(await auditEvents(requestId)).toEqual(["requested", "purged"]);
  });

  it("a cancel racing the purge either wins (account kept) or finds the account gone: never half-deleted", async () => {
    const { user } = await userWithData();
    await requestDeletion(user.token);
    await endGracePeriod(user);
    const [cancel] = await Promise.all([
      call("/v1/users/me/deletion", { method: "DELETE", token: user.token }),
      purge(),
    ]);
    if (await userExists(user)) {
      expect(cancel.status).toBe(204);
      expect((await holdings(user)).lists).toBe(2); // the personal list and "Keep me"
    } else {
      expect([204, 401]).toContain(cancel.status);
      expect(await holdings(user)).toEqual({ lists: 0, tasks: 0, profile: 0, devices: 0 });
    }
  });
});
