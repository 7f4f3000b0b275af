// A session tidesync signed out (another session's deletion request, remote
// sign-out of a device, its own sign-out) or a user Supabase Auth banned holds
// an access token that stays unexpired for up to an hour, and PostgREST (the
// Data API, supabase-js) accepts it until then. It opens nothing there either:
// the policies and public functions check the session as the api function
// does (app_private.live_uid(), migration 20261128001800). Nor does an invite
// code it created while it was live: a code works only while the session that
// created it counts (app_private.invite_is_honoured, migration 20261128002400).
// `viaDataApi` runs SQL as PostgREST does for a token it verified: role
// authenticated, the token's payload as request.jwt.claims.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { phone, startSession } from "../support/device-sessions.ts";
import { asUser, pushOk, upsert } from "../support/shared-lists.ts";

/** The owner (hosted `postgres`): what pg_cron runs the account purge as. */
const ownerSql = postgres(stack.ownerDbUrl, { max: 2, onnotice: () => {} });
afterAll(async () => { await ownerSql.end({ timeout: 5 }); });

async function viaDataApi<T>(token: string, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const claims = Buffer.from(token.split(".")[1], "base64url").toString("utf8");
  return await adminSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
    return await work(tx);
  }) as T;
}

/** The SQLSTATE a statement fails with through the Data API, or "ok". */
async function outcome(token: string, work: (tx: postgres.TransactionSql) => Promise<unknown>): Promise<string> {
  return await viaDataApi(token, work).then(() => "ok", (error: { code?: string }) => error.code ?? String(error));
}

const tasksOf = (token: string, list: string) =>
  viaDataApi(token, async (tx) => (await tx<{ title: string }[]>`select title from public.tasks where list_id = ${list} order by title`).map((t) => t.title));

const createInvite = (token: string, list: string, role: "owner" | "editor" | "viewer") =>
  viaDataApi(token, async (tx) => (await tx<{ code: string }[]>`select public.create_list_invite(${list}, ${role}) as code`)[0].code);

async function listWithTask(user: TestUser, title: string): Promise<string> {
  const list = randomUUID();
  await pushOk(user, { ops: [upsert("lists", list, { title: "Private" }), upsert("tasks", randomUUID(), { list_id: list, title })] });
  return list;
}

describe("the Data API after tidesync signed a session out", () => {
  it("a deletion request: the other (stolen) session neither reads, writes nor invites anyone; the requesting one still works", async () => {
    const alice = await createTestUser();
    const stolen = await alice.newSession();
    await startSession(stolen.token, phone());
    const list = await listWithTask(alice, "secret");
    expect(await tasksOf(stolen.token, list)).toEqual(["secret"]); // live: the same token reads

    const request = await call("/v1/users/me/deletion", { method: "POST", token: alice.token, body: {} });
    expect(request.status, request.text).toBe(202);
    expect((await call("/v1/sync/changes", { token: stolen.token })).status).toBe(401);

    expect(await tasksOf(stolen.token, list)).toEqual([]);
    expect(await outcome(stolen.token, (tx) => tx`insert into public.tasks (list_id, title) values (${list}, 'written after sign-out')`)).toBe("42501");
    expect(await outcome(stolen.token, (tx) => tx`select public.create_list_invite(${list}, 'owner')`)).toBe("42501");
    expect(await outcome(stolen.token, (tx) => tx`update public.profiles set display_name = 'Mallory' where id = ${alice.userId}`)).toBe("ok");
    const [{ display_name }] = await adminSql`select display_name from public.profiles where id = ${alice.userId}`;
    expect(display_name).not.toBe("Mallory"); // the update found no row

    // The session that asked stays signed in for the grace period (it may cancel or export).
    expect(await tasksOf(alice.token, list)).toEqual(["secret"]);
    const members = await adminSql`select user_id from public.list_members where list_id = ${list}`;
    expect(members.map((m) => m.user_id)).toEqual([alice.userId]);
  });

  it("a deletion request: an owner code the stolen session created while live admits nobody, and the purge hands the list to nobody", async () => {
    const alice = await createTestUser();
    const mallory = await createTestUser(); // the thief's own account
    const stolen = await alice.newSession();
    const list = await listWithTask(alice, "secret");
    const code = await createInvite(stolen.token, list, "owner"); // while the stolen session is live

    const request = await call("/v1/users/me/deletion", { method: "POST", token: alice.token, body: {} });
    expect(request.status, request.text).toBe(202);

    expect(await outcome(mallory.token, (tx) => tx`select public.accept_list_invite(${code})`)).toBe("P0002"); // as a wrong code
    expect(await tasksOf(mallory.token, list)).toEqual([]);
    // Cancelling does not bring the code back: its session stays signed out.
    expect((await call("/v1/users/me/deletion", { method: "DELETE", token: alice.token })).status).toBe(204);
    expect(await outcome(mallory.token, (tx) => tx`select public.accept_list_invite(${code})`)).toBe("P0002");

    expect((await call("/v1/users/me/deletion", { method: "POST", token: alice.token, body: {} })).status).toBe(202);
    await adminSql`update app_private.account_deletion_requests
                      set requested_at = now() - interval '30 days', scheduled_for = now() - interval '1 second'
                    where user_id = ${alice.userId}`;
    await ownerSql`select * from app_private.run_account_deletions()`;
    expect(await adminSql`select 1 from auth.users where id = ${alice.userId}`).toHaveLength(0);
    expect(await adminSql`select 1 from public.lists where id = ${list}`).toHaveLength(0); // nobody to hand it to
  });

  it("remote sign-out of a lost phone (DELETE /v1/devices/{id}): the codes it created admit nobody; the owner's other codes still work", async () => {
    const dana = await createTestUser();
    const bob = await createTestUser();
    const lost = await dana.newSession();
    const device = await startSession(lost.token, phone());
    const list = await listWithTask(dana, "dana's task");
    const lostCode = await createInvite(lost.token, list, "owner");
    const ownCode = await createInvite(dana.token, list, "viewer");
    expect((await call(`/v1/devices/${device.body.device.id}`, { method: "DELETE", token: dana.token })).status).toBe(204);

    expect(await outcome(bob.token, (tx) => tx`select public.accept_list_invite(${lostCode})`)).toBe("P0002");
    expect(await outcome(bob.token, (tx) => tx`select public.accept_list_invite(${ownCode})`)).toBe("ok");
    const [member] = await adminSql<{ role: string }[]>`select role from public.list_members where list_id = ${list} and user_id = ${bob.userId}`;
    expect(member.role).toBe("viewer");
  });

  it("remote sign-out of a lost phone (DELETE /v1/devices/{id}): its token deletes nothing through the Data API", async () => {
    const dana = await createTestUser();
    const lost = await dana.newSession();
    const device = await startSession(lost.token, phone());
    const list = await listWithTask(dana, "dana's task");
    const signOut = await call(`/v1/devices/${device.body.device.id}`, { method: "DELETE", token: dana.token });
    expect(signOut.status, signOut.text).toBe(204);
    expect((await call("/v1/whoami", { token: lost.token })).status).toBe(401);

    const deleted = await viaDataApi(lost.token, (tx) => tx`delete from public.tasks where list_id = ${list} returning title`);
    expect(deleted).toEqual([]);
    expect(await tasksOf(dana.token, list)).toEqual(["dana's task"]);
  });

  it("its own sign-out (DELETE /v1/auth/session): the token reads nothing more", async () => {
    const erin = await createTestUser();
    await startSession(erin.token, phone());
    const list = await listWithTask(erin, "erin's task");
    expect((await call("/v1/auth/session", { method: "DELETE", token: erin.token })).status).toBe(204);
    expect(await tasksOf(erin.token, list)).toEqual([]);
  });

  it("a banned user: accept_list_invite refuses them and they read nothing of the lists they are in", async () => {
    const carol = await createTestUser();
    const bob = await createTestUser();
    const list = await listWithTask(carol, "carol's task");
    const code = await asUser(carol, async (tx) => (await tx<{ code: string }[]>`select public.create_list_invite(${list}, 'editor') as code`)[0].code);
    const shared = await listWithTask(carol, "shared task");
    const sharedCode = await asUser(carol, async (tx) => (await tx<{ code: string }[]>`select public.create_list_invite(${shared}, 'editor') as code`)[0].code);
    await asUser(bob, (tx) => tx`select public.accept_list_invite(${sharedCode})`);
    expect(await tasksOf(bob.token, shared)).toEqual(["shared task"]);

    await adminSql`update auth.users set banned_until = now() + interval '100 years' where id = ${bob.userId}`;
    expect((await call("/v1/whoami", { token: bob.token })).status).toBe(401);
    expect(await outcome(bob.token, (tx) => tx`select public.accept_list_invite(${code})`)).toBe("42501");
    expect(await adminSql`select 1 from public.list_members where list_id = ${list} and user_id = ${bob.userId}`).toHaveLength(0);
    expect(await tasksOf(bob.token, shared)).toEqual([]);
  });
});
