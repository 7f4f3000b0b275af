// GET /v1/users/me/export through real Deno and Postgres: a user with data in
// every table gets all of it, and nothing of a second user who writes in the
// same shared lists or tests the same build; the document is the versioned,
// schema-described one, served as an attachment; the route is rate-limited tightly.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { accountExportSchema } from "../../functions/_shared/schemas/account-export.ts";
import { notificationPreferencesSchema } from "../../functions/_shared/schemas/notifications.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { phone, pushToken, startSession } from "../support/device-sessions.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { asUser, pushOk, removeMember, share, upsert } from "../support/shared-lists.ts";
import { binaryRelease, freshChannel, publish, testerGroup } from "../support/releases.ts";

async function exportOf(token: string, baseUrl?: string) {
  return await call("/v1/users/me/export", { token, baseUrl });
}

/** Deletes a test bucket and its objects as Storage's API does: Storage refuses a direct delete unless its transaction sets storage.allow_delete_query. */
async function removeBucket(bucket: string) {
  await adminSql.begin(async (tx) => {
    await tx`select set_config('storage.allow_delete_query', 'true', true)`;
    await tx`delete from storage.objects where bucket_id = ${bucket}`;
    await tx`delete from storage.buckets where id = ${bucket}`;
  });
}

describe("GET /v1/users/me/export", () => {
  it("holds everything of the caller in every section, and nothing of another member of the same shared lists", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const alicePhone = await alice.newSession();
    await adminSql`update public.profiles set display_name = 'Alice Export', completed_steps = '{welcome}' where id = ${alice.userId}`;
    await adminSql`update public.profiles set display_name = 'Bob Secret' where id = ${bob.userId}`;
    const device = await startSession(alice.token, phone({ push_token: pushToken(), push_provider: "apns" }));
    await startSession(bob.token, phone());

    // Notification preferences, changed twice (two history entries).
    const defaults = notificationPreferencesSchema.parse((await call("/v1/users/me/notifications", { token: alice.token })).body);
    for (const start of ["21:00", "22:30"]) {
      const put = await call("/v1/users/me/notifications", {
        method: "PUT", token: alice.token,
        body: { categories: defaults.categories, quiet_hours: { ...defaults.quiet_hours, enabled: true, start } },
      });
      expect(put.status, put.text).toBe(200);
    }

    // Alice's list shared with Bob, Bob's list shared with Alice; both write in both.
    const aliceList = randomUUID();
    const bobList = randomUUID();
    const aliceTasks = [randomUUID(), randomUUID()];
    const bobTasks = [randomUUID(), randomUUID()];
    const aliceOps = await pushOk(alice, { ops: [upsert("lists", aliceList, { title: "Alice shares" })] });
    await pushOk(bob, { ops: [upsert("lists", bobList, { title: "Bob shares" })] });
    await share(alice, aliceList, bob, "editor");
    await share(bob, bobList, alice, "editor");
    await pushOk(alice, { ops: [
      upsert("tasks", aliceTasks[0], { list_id: aliceList, title: "alice-task-in-her-list" }),
      upsert("tasks", aliceTasks[1], { list_id: bobList, title: "alice-task-in-bobs-list" }),
    ] });
    await pushOk(bob, { ops: [
      upsert("tasks", bobTasks[0], { list_id: aliceList, title: "bob-task-in-alices-list" }),
      upsert("tasks", bobTasks[1], { list_id: bobList, title: "bob-task-in-his-list" }),
    ] });
    const openInvite = await asUser(alice, async (tx) => (await tx`select public.create_list_invite(${aliceList}, 'viewer')`).length);
    expect(openInvite).toBe(1);

    const response = await exportOf(alice.token);
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="tidesync-export-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const doc = accountExportSchema.parse(response.body);

    expect(doc.export_version).toBe(1);
    expect(Math.abs(Date.parse(doc.generated_at) - Date.now())).toBeLessThan(10 * 60_000);
    expect(doc.account).toMatchObject({ id: alice.userId, email: alice.email, is_anonymous: false });
    expect(doc.profile).toMatchObject({ id: alice.userId, display_name: "Alice Export", completed_steps: ["welcome"] });
    expect(doc.devices.map((d) => d.id)).toEqual([device.body.device.id]);
    expect(doc.devices[0]).toMatchObject({ has_push_token: true });
    expect(response.text).not.toContain("test-apns-"); // the push token itself stays out
    expect(doc.sessions.map((s) => s.id).sort()).toEqual([alice.sessionId, alicePhone.sessionId].sort());
    expect(doc.notification_preferences.quiet_hours).toMatchObject({ enabled: true, start: "22:30" });
    expect(doc.notification_preference_history.map((h) => (h.new as { quiet_hours: { start: string } }).quiet_hours.start)).toEqual(["21:00", "22:30"]);
    expect(doc.list_memberships.map((m) => [m.list_id, m.role]).sort()).toEqual(
      [[alice.userId, "owner"], [aliceList, "owner"], [bobList, "editor"]].sort(),
    );
    // The invite Bob used (who used it is not hers to export) and the open one.
    expect(doc.list_invites.map((i) => [i.list_id, i.role, i.used_at === null]).sort()).toEqual(
      [[aliceList, "editor", false], [aliceList, "viewer", true]].sort(),
    );
    expect(doc.sync_op_results.map((o) => o.op_id)).toEqual(expect.arrayContaining(aliceOps.results.map((r) => r.op_id)));
    expect(doc.account_deletion).toEqual({ status: "none", requested_at: null, scheduled_for: null, last_attempt_at: null });
    expect(doc.synced.lists.map((l) => l.id).sort()).toEqual([alice.userId, aliceList].sort());
    expect(doc.synced.tasks.map((t) => t.id).sort()).toEqual([...aliceTasks].sort());
    expect(doc.synced.tasks.find((t) => t.id === aliceTasks[1])).toMatchObject({ title: "alice-task-in-bobs-list", list_id: bobList });
    // Her memberships as synced rows (list_members), never Bob's memberships of the same lists.
    expect(doc.synced.list_members.map((m) => [m.list_id, m.user_id, m.role]).sort()).toEqual(
      [[alice.userId, alice.userId, "owner"], [aliceList, alice.userId, "owner"], [bobList, alice.userId, "editor"]].sort(),
    );
    expect(doc.complete).toBe(true);

    // Nothing of Bob: not his id, email, name, tasks (even in her list) or his list's rows.
    for (const secret of [bob.userId, bob.email, "Bob Secret", ...bobTasks, "bob-task-in-alices-list", "bob-task-in-his-list", bob.sessionId]) {
      expect(response.text).not.toContain(secret);
    }
    // …and Bob's export holds his tasks, not Alice's; made an owner of her
    // list, he still does not get its row (it names her as its creator).
    await asUser(alice, (tx) => tx`update public.list_members set role = 'owner' where list_id = ${aliceList} and user_id = ${bob.userId}`);
    const bobsResponse = await exportOf(bob.token);
    const bobs = accountExportSchema.parse(bobsResponse.body);
    expect(bobs.synced.tasks.map((t) => t.id).sort()).toEqual([...bobTasks].sort());
    expect(bobs.synced.lists.map((l) => l.id).sort()).toEqual([bob.userId, bobList].sort());
    expect(bobs.list_memberships.find((m) => m.list_id === aliceList)).toMatchObject({ role: "owner", title: "Alice shares" });
    for (const secret of [alice.userId, alice.email, "Alice Export", ...aliceTasks]) expect(bobsResponse.text).not.toContain(secret);
  });

  it("a list handed over when its creator's account is deleted: each member's export holds what they wrote in it; what the deleted user wrote is nobody's", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const xavier = await createTestUser();
    const list = randomUUID();
    const [aliceTask, bobTask, xavierTask] = [randomUUID(), randomUUID(), randomUUID()];
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Handed over" }), upsert("tasks", aliceTask, { list_id: list, title: "alice-wrote" })] });
    await share(alice, list, bob, "editor");
    await share(alice, list, xavier, "editor");
    await pushOk(bob, { ops: [upsert("tasks", bobTask, { list_id: list, title: "bob-wrote" })] });
    await pushOk(xavier, { ops: [upsert("tasks", xavierTask, { list_id: list, title: "xavier-wrote" })] });

    await adminSql`delete from auth.users where id = ${alice.userId}`;

    // Bob, the longest-standing editor, owns the list now: his export names it
    // with its title and his role, and holds the task he wrote, not the list's row.
    const bobs = accountExportSchema.parse((await exportOf(bob.token)).body);
    expect(bobs.list_memberships.find((m) => m.list_id === list)).toMatchObject({ role: "owner", title: "Handed over" });
    expect(bobs.synced.lists.map((l) => l.id)).not.toContain(list);
    expect(bobs.synced.tasks.map((t) => t.id)).toEqual([bobTask]);
    // Xavier, still an editor, keeps what he wrote in it.
    const xaviers = accountExportSchema.parse((await exportOf(xavier.token)).body);
    expect(xaviers.list_memberships.find((m) => m.list_id === list)).toMatchObject({ role: "editor", title: "Handed over" });
    expect(xaviers.synced.tasks.map((t) => t.id)).toEqual([xavierTask]);
    // What Alice wrote stays with the list and names no one (docs/account-deletion.md, step 5).
    const created = await adminSql<{ id: string; created_by: string | null }[]>`
      select id::text, created_by::text from public.lists where id = ${list}
      union all select id::text, created_by::text from public.tasks where id = ${aliceTask}`;
    expect(created).toEqual(expect.arrayContaining([{ id: list, created_by: null }, { id: aliceTask, created_by: null }]));
    expect(created).toHaveLength(2);
  });

  it("holds the caller's tester-group memberships and release feedback, and nothing of another tester of the same build", async () => {
    const tester = await createTestUser();
    const other = await createTestUser();
    const channel = freshChannel();
    const group = await testerGroup([channel], [tester.userId, other.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const device = await startSession(tester.token, phone({ platform: "android", build_number: 199 }));
    const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "MY-FEEDBACK-TEXT-123" } });
    expect(sent.status, sent.text).toBe(201);
    const theirs = await call(`/v1/releases/${id}/feedback`, {
      method: "POST", token: other.token, body: { body: "THEIR-FEEDBACK-456", platform: "ios", build_number: 200 },
    });
    expect(theirs.status, theirs.text).toBe(201);

    const response = await exportOf(tester.token);
    expect(response.status, response.text).toBe(200);
    const doc = accountExportSchema.parse(response.body);
    expect(doc.tester_group_memberships).toEqual([{ group_id: group, added_at: expect.any(String) }]);
    expect(doc.release_feedback).toEqual([{
      id: sent.body.id, release_id: id, device_id: device.body.device.id, platform: "android", build_number: 199,
      body: "MY-FEEDBACK-TEXT-123", created_at: expect.any(String),
    }]);
    expect(Date.parse(doc.release_feedback[0].created_at as string)).toBe(Date.parse(sent.body.created_at));
    expect(doc.complete).toBe(true);
    for (const secret of ["THEIR-FEEDBACK-456", theirs.body.id, other.userId]) expect(response.text).not.toContain(secret);
  });

  it("holds the caller's user metadata, sign-in identities and owned Storage objects (metadata only), and nothing of another user's", async () => {
    const carol = await createTestUser();
    const dave = await createTestUser();
    const bucket = `export-${randomUUID()}`;
    // What Supabase Auth and Storage write: updateUser({ data }), a linked GitHub account, an upload.
    await adminSql`update auth.users set raw_user_meta_data = raw_user_meta_data || '{"nickname": "CAROL-NICK-1"}' where id = ${carol.userId}`;
    await adminSql`update auth.users set raw_user_meta_data = raw_user_meta_data || '{"nickname": "DAVE-NICK-2"}' where id = ${dave.userId}`;
    await adminSql`insert into auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at, last_sign_in_at) values
      ('CAROL-GH-1', ${carol.userId}, '{"sub": "CAROL-GH-1", "user_name": "carol"}', 'github', now(), now(), now()),
      ('DAVE-GH-2', ${dave.userId}, '{"sub": "DAVE-GH-2"}', 'github', now(), now(), now())`;
    await adminSql`insert into storage.buckets (id, name) values (${bucket}, ${bucket})`;
    try {
      await adminSql`insert into storage.objects (bucket_id, name, owner, owner_id, metadata) values
        (${bucket}, 'carol/avatar.png', ${carol.userId}, ${carol.userId}, '{"size": 2048, "mimetype": "image/png"}'),
        (${bucket}, 'dave/DAVE-FILE.png', ${dave.userId}, ${dave.userId}, '{"size": 1, "mimetype": "image/png"}')`;

      const response = await exportOf(carol.token);
      expect(response.status, response.text).toBe(200);
      const doc = accountExportSchema.parse(response.body);
      expect(doc.export_version).toBe(1);
      expect(doc.account.user_metadata).toMatchObject({ nickname: "CAROL-NICK-1" });
      expect(doc.identities).toEqual([{
        id: expect.any(String), provider: "github", provider_id: "CAROL-GH-1", identity_data: { sub: "CAROL-GH-1", user_name: "carol" },
        created_at: expect.any(String), updated_at: expect.any(String), last_sign_in_at: expect.any(String),
      }]);
      expect(doc.storage_objects).toEqual([{
        id: expect.any(String), bucket_id: bucket, name: "carol/avatar.png", size: 2048, mime_type: "image/png",
        created_at: expect.any(String), updated_at: expect.any(String), last_accessed_at: expect.any(String), user_metadata: null,
      }]);
      expect(doc.complete).toBe(true);
      for (const secret of ["DAVE-NICK-2", "DAVE-GH-2", "DAVE-FILE", dave.userId]) expect(response.text).not.toContain(secret);
    } finally {
      // Owned objects would keep the purge from deleting these users (docs/account-deletion.md).
      await removeBucket(bucket);
    }
  });

  it("holds the caller's app metadata, MFA factors (never a secret), each Storage object's user_metadata, the invites they used and those they created on a list they no longer own", async () => {
    const erin = await createTestUser();
    const grace = await createTestUser();
    const frank = await createTestUser();
    const bucket = `export-${randomUUID()}`;
    // What an admin sets (auth.admin.updateUserById({ app_metadata })), what
    // Supabase Auth keeps of enrolled factors, and an upload with its own metadata.
    await adminSql`update auth.users set raw_app_meta_data = raw_app_meta_data || '{"plan": "ERIN-PLAN-1"}' where id = ${erin.userId}`;
    await adminSql`update auth.users set raw_app_meta_data = raw_app_meta_data || '{"plan": "FRANK-PLAN-2"}' where id = ${frank.userId}`;
    const [totp, sms] = [randomUUID(), randomUUID()];
    await adminSql`insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone) values
      (${totp}, ${erin.userId}, 'ERIN-AUTHENTICATOR', 'totp', 'verified', now() - interval '1 hour', now(), 'ERIN-TOTP-SECRET-1', null),
      (${sms}, ${erin.userId}, 'ERIN-SMS', 'phone', 'unverified', now(), now(), null, '+15550001234'),
      (${randomUUID()}, ${frank.userId}, 'FRANK-AUTHENTICATOR', 'totp', 'verified', now(), now(), 'FRANK-TOTP-SECRET-2', null)`;
    // Their sessions completed MFA (mfa.verify raised them to aal2): an aal1 one would reach nothing (mfa-needs-aal2).
    await adminSql`update auth.sessions set aal = 'aal2' where user_id in (${erin.userId}, ${frank.userId})`;
    await adminSql`insert into storage.buckets (id, name) values (${bucket}, ${bucket})`;
    try {
      await adminSql`insert into storage.objects (bucket_id, name, owner_id, metadata, user_metadata) values
        (${bucket}, 'erin/notes.txt', ${erin.userId}, '{"size": 5, "mimetype": "text/plain"}', '{"caption": "ERIN-CAPTION"}'),
        (${bucket}, 'frank/notes.txt', ${frank.userId}, '{"size": 5, "mimetype": "text/plain"}', '{"caption": "FRANK-CAPTION"}')`;

      // Erin's list: Grace joins it as an owner through Erin's invite, invites
      // Frank (who uses it) and leaves one open; then Erin demotes her.
      const list = randomUUID();
      await pushOk(erin, { ops: [upsert("lists", list, { title: "Erin shares" })] });
      await share(erin, list, grace, "owner");
      await share(grace, list, frank, "viewer");
      await asUser(grace, (tx) => tx`select public.create_list_invite(${list}, 'editor')`);
      await asUser(erin, (tx) => tx`update public.list_members set role = 'editor' where list_id = ${list} and user_id = ${grace.userId}`);

      const erins = await exportOf(erin.token);
      expect(erins.status, erins.text).toBe(200);
      const doc = accountExportSchema.parse(erins.body);
      expect(doc.export_version).toBe(1);
      expect(doc.account.app_metadata).toEqual({ provider: "email", providers: ["email"], plan: "ERIN-PLAN-1" });
      expect(doc.mfa_factors).toEqual([
        { id: totp, friendly_name: "ERIN-AUTHENTICATOR", factor_type: "totp", status: "verified", created_at: expect.any(String), updated_at: expect.any(String), last_challenged_at: null, web_authn_aaguid: null },
        { id: sms, friendly_name: "ERIN-SMS", factor_type: "phone", status: "unverified", created_at: expect.any(String), updated_at: expect.any(String), last_challenged_at: null, web_authn_aaguid: null },
      ]);
      expect(doc.storage_objects).toEqual([{
        id: expect.any(String), bucket_id: bucket, name: "erin/notes.txt", size: 5, mime_type: "text/plain",
        created_at: expect.any(String), updated_at: expect.any(String), last_accessed_at: expect.any(String),
        user_metadata: { caption: "ERIN-CAPTION" },
      }]);
      expect(doc.list_invites.map((i) => [i.list_id, i.role, i.used_at === null])).toEqual([[list, "owner", false]]);
      expect(doc.accepted_list_invites).toEqual([]);
      expect(doc.complete).toBe(true);
      // No secret of hers (the TOTP secret, the factor's phone), nothing of the others'.
      for (const secret of ["ERIN-TOTP-SECRET-1", "+15550001234", "FRANK-PLAN-2", "FRANK-AUTHENTICATOR", "FRANK-TOTP-SECRET-2",
        "FRANK-CAPTION", grace.userId, frank.userId]) {
        expect(erins.text).not.toContain(secret);
      }

      // Grace, no longer an owner: the invites she created are still hers, and the one she used.
      const graces = accountExportSchema.parse((await exportOf(grace.token)).body);
      expect(graces.list_invites.map((i) => [i.list_id, i.role, i.used_at === null])).toEqual([[list, "viewer", false], [list, "editor", true]]);
      expect(graces.accepted_list_invites).toEqual([{ id: expect.any(String), list_id: list, role: "owner", used_at: expect.any(String) }]);
      expect(graces.mfa_factors).toEqual([]);
      const franks = await exportOf(frank.token);
      const franksDoc = accountExportSchema.parse(franks.body);
      expect(franksDoc.accepted_list_invites.map((i) => [i.list_id, i.role])).toEqual([[list, "viewer"]]);
      // Who created the invite he used is Grace's, not his.
      for (const other of [grace.userId, erin.userId]) expect(franks.text).not.toContain(other);
    } finally {
      await removeBucket(bucket);
    }
  });

  it("holds the caller's sync quota usage and their history of gaining and losing lists, naming no other user", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const aliceList = randomUUID();
    const bobList = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", aliceList, { title: "Alice's" }), upsert("tasks", randomUUID(), { list_id: alice.userId, title: "personal" })] });
    await pushOk(bob, { ops: [upsert("lists", bobList, { title: "Bob's" })] });
    await share(bob, bobList, alice, "editor");
    await share(alice, aliceList, bob, "viewer");
    await removeMember(bob, bobList, alice); // Alice loses Bob's list: a revocation of hers

    const response = await exportOf(alice.token);
    expect(response.status, response.text).toBe(200);
    const doc = accountExportSchema.parse(response.body);
    // The quota she runs into (QUOTA_EXCEEDED): the list and the task she created.
    expect(doc.sync_usage).toEqual({ live_records: 2 });
    // Her own access history: her personal list, her list, Bob's list granted then lost; never Bob's.
    const access = Object.fromEntries(doc.sync_access.map((a) => [a.scope_id, a.granted]));
    expect(access).toEqual({ [alice.userId]: true, [aliceList]: true, [bobList]: false });
    for (const a of doc.sync_access) expect(Object.keys(a).sort()).toEqual(["changed_at", "granted", "scope_id"]);
    expect(response.text).not.toContain(bob.userId);

    // Bob's export names his lists only, never Alice's personal list nor her revocation.
    const bobs = accountExportSchema.parse((await exportOf(bob.token)).body);
    expect(Object.fromEntries(bobs.sync_access.map((a) => [a.scope_id, a.granted]))).toEqual({ [bob.userId]: true, [bobList]: true, [aliceList]: true });
    expect(bobs.sync_usage).toEqual({ live_records: 1 });
  });

  it("holds every column of the caller's account, sessions, MFA factors, devices, invites and deletion request that is theirs and no secret", async () => {
    const user = await createTestUser();
    const factor = randomUUID();
    const aaguid = randomUUID();
    await adminSql`update auth.users set phone_confirmed_at = now(), banned_until = now() - interval '1 day' where id = ${user.userId}`;
    await adminSql`insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, last_challenged_at, web_authn_aaguid)
                   values (${factor}, ${user.userId}, 'key', 'webauthn', 'unverified', now(), now(), now(), ${aaguid})`;
    await adminSql`update auth.sessions set refreshed_at = now() at time zone 'utc', factor_id = ${factor} where id = ${user.sessionId}`;
    const device = await startSession(user.token, phone());
    const list = randomUUID();
    await pushOk(user, { ops: [upsert("lists", list, { title: "Invites" })] });
    await asUser(user, (tx) => tx`select public.create_list_invite(${list}, 'viewer')`);
    expect((await call("/v1/users/me/deletion", { method: "POST", token: user.token, body: {} })).status).toBe(202);
    await adminSql`update app_private.account_deletion_requests set last_attempt_at = now() - interval '1 minute' where user_id = ${user.userId}`;

    const response = await exportOf(user.token);
    expect(response.status, response.text).toBe(200);
    const doc = accountExportSchema.parse(response.body);
    expect(doc.account).toMatchObject({ phone_confirmed_at: expect.any(String), updated_at: expect.any(String), banned_until: expect.any(String) });
    expect(doc.sessions).toEqual([expect.objectContaining({ id: user.sessionId, refreshed_at: expect.any(String), factor_id: factor })]);
    expect(doc.mfa_factors).toEqual([expect.objectContaining({ id: factor, last_challenged_at: expect.any(String), web_authn_aaguid: aaguid })]);
    expect(doc.devices).toEqual([expect.objectContaining({ id: device.body.device.id, session_id: user.sessionId })]);
    expect(doc.list_invites).toEqual([expect.objectContaining({ list_id: list, created_session: user.sessionId })]);
    expect(doc.account_deletion).toMatchObject({ status: "scheduled", last_attempt_at: expect.any(String) });
  });

  it("holds the metadata of the Storage buckets the caller owns (owner or owner_id), and not another user's", async () => {
    const owner = await createTestUser();
    const other = await createTestUser();
    const [byOwnerId, byOwner, others] = [`own-id-${randomUUID()}`, `own-${randomUUID()}`, `other-${randomUUID()}`];
    await adminSql`insert into storage.buckets (id, name, owner_id, public) values (${byOwnerId}, ${byOwnerId}, ${owner.userId}, true)`;
    await adminSql`insert into storage.buckets (id, name, owner) values (${byOwner}, ${byOwner}, ${owner.userId})`;
    await adminSql`insert into storage.buckets (id, name, owner_id) values (${others}, ${others}, ${other.userId})`;
    try {
      const response = await exportOf(owner.token);
      expect(response.status, response.text).toBe(200);
      const doc = accountExportSchema.parse(response.body);
      expect(doc.storage_buckets.map((b) => [b.id, b.public]).sort()).toEqual([[byOwner, false], [byOwnerId, true]].sort());
      expect(response.text).not.toContain(others);
    } finally {
      for (const bucket of [byOwnerId, byOwner, others]) await removeBucket(bucket);
    }
  });

  it("a pending deletion is in the export (through the shipped client)", async () => {
    const user = await createTestUser();
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token });
    const scheduled = await api.requestAccountDeletion();
    const doc = await api.exportAccount();
    expect(doc.account_deletion).toEqual({ status: "scheduled", requested_at: scheduled.requested_at, scheduled_for: scheduled.scheduled_for, last_attempt_at: null });
    expect(doc.account.id).toBe(user.userId);
    await api.cancelAccountDeletion();
    expect((await api.getAccountDeletion()).status).toBe("none");
  });

  it("the shipped client hands over the export as the server sent it: a section or field a later server adds is kept", async () => {
    const user = await createTestUser();
    await pushOk(user, { ops: [upsert("tasks", randomUUID(), { list_id: user.userId, title: "kept" })] });
    const raw = await exportOf(user.token);
    expect(raw.status, raw.text).toBe(200);
    const viaClient = await new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token }).exportAccount();
    expect(viaClient).toEqual({ ...raw.body, generated_at: expect.any(String) });
    // A later server (docs/account-export.md: sections may be added without a new export_version).
    const body = raw.body as { account: Record<string, unknown> };
    const later = { ...body, account: { ...body.account, recovery_email: "added-later@example.com" }, chat_messages: [{ body: "added later" }] };
    const shipped = new TidesyncApi({
      baseUrl: "https://later.example", getAccessToken: () => user.token,
      fetch: async () => new Response(JSON.stringify(later), { status: 200, headers: { "content-type": "application/json" } }),
    });
    expect(await shipped.exportAccount()).toEqual(later);
    // Still checked: a document cut off (no `complete`) is refused.
    const { complete: _, ...cut } = later as Record<string, unknown>;
    const cutOff = new TidesyncApi({
      baseUrl: "https://later.example", getAccessToken: () => user.token,
      fetch: async () => new Response(JSON.stringify(cut), { status: 200, headers: { "content-type": "application/json" } }),
    });
    await expect(cutOff.exportAccount()).rejects.toThrow("does not match the contract");
  });

  it("401 without a token or with a signed-out session, 405 for another method", async () => {
    expectEnvelope(await exportOf(""), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await exportOf(user.token), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/users/me/export", { method: "POST", body: {} }), 405, "METHOD_NOT_ALLOWED");
  });
});

describe("GET /v1/users/me/export under its default budget", () => {
  let server: FunctionsServer;
  beforeAll(async () => {
    // The default rules of the code (3 exports an hour), not the test stack's generous ones.
    const { TIDESYNC_RATE_LIMITS: _generous, ...env } = stack.functionsEnv;
    server = await startFunctionsServer(env, { name: "issue9-export-budget" });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("the fourth export within the hour is 429 with Retry-After; another user still has their budget", async () => {
    const meta = await call("/v1/meta", { baseUrl: server.apiUrl });
    expect(meta.body.rate_limits["account.export"]).toEqual({ limit: 3, window_seconds: 3600, per: "user" });
    const user = await createTestUser();
    for (let i = 0; i < 3; i++) expect((await exportOf(user.token, server.apiUrl)).status).toBe(200);
    const limited = await exportOf(user.token, server.apiUrl);
    expectEnvelope(limited, 429, "RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-policy")).toBe("3;w=3600");
    const other = await createTestUser();
    expect((await exportOf(other.token, server.apiUrl)).status).toBe(200);
  });

  it("an export refused for its query (400) spends none of the budget; a bad token is still 401 first", async () => {
    const user = await createTestUser();
    for (const query of ["format=csv", "limit=10", "%00=1"]) {
      const refused = await call(`/v1/users/me/export?${query}`, { token: user.token, baseUrl: server.apiUrl });
      expectEnvelope(refused, 400, "VALIDATION_FAILED");
      expect(refused.headers.get("ratelimit-remaining"), query).toBeNull();
    }
    expectEnvelope(await call("/v1/users/me/export?format=csv", { baseUrl: server.apiUrl }), 401, "UNAUTHENTICATED");
    for (let i = 0; i < 3; i++) {
      const download = await exportOf(user.token, server.apiUrl);
      expect(download.status, download.text.slice(0, 200)).toBe(200);
      expect(download.headers.get("ratelimit-remaining")).toBe(String(2 - i));
    }
    expectEnvelope(await exportOf(user.token, server.apiUrl), 429, "RATE_LIMITED");
  });
});
