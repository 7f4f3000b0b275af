// Ids Postgres stores that are not RFC 9562 uuids (version and variant digits
// outside the RFC's), through the real client: a task a member inserted with
// supabase-js under 11111111-1111-1111-1111-…, a user id the project chose with
// auth.admin.createUser({ id }). The server answered them, and the client
// refused its own answers (z.uuid()): one member's insert stopped every
// member's pull of the list, on every retry.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TidesyncClient } from "../../client/sync-client.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { clientDevice } from "../support/client-device.ts";
import { asUser, settled, share } from "../support/shared-lists.ts";

/** A uuid to Postgres, not to RFC 9562 (its variant digit is 1), unique per call. */
const nonRfcUuid = () => `11111111-1111-1111-1111-${randomBytes(6).toString("hex")}`;

/** A phone of `user`: the real client, its session bound to the installation. */
const device = (user: TestUser, installationId?: string) => clientDevice(user, { installationId });

const titles = async (client: TidesyncClient, listId: string) =>
  (await client.list("tasks")).filter((t) => t.data?.list_id === listId).map((t) => t.data?.title).sort();

describe("ids Postgres stores that RFC 9562 does not define", () => {
  it("a task an editor inserts through the Data API under such an id reaches the owner's device, which edits it and adds its own", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const phone = await device(alice);
    // supabase-js by Alice: from('lists').insert({ id, title }), shared with Bob as editor; by Bob: from('tasks').insert(…).
    const list = nonRfcUuid();
    await asUser(alice, (tx) => tx`insert into public.lists (id, title) values (${list}, 'Groceries')`);
    await share(alice, list, bob, "editor");
    const milk = nonRfcUuid();
    await asUser(bob, (tx) => tx`insert into public.tasks (id, list_id, title) values (${milk.toUpperCase()}, ${list}, 'Milk')`);
    await settled();

    await phone.client.sync();
    expect(await titles(phone.client, list)).toEqual(["Milk"]);
    expect(await phone.client.get("tasks", milk)).toMatchObject({ id: milk, pending: false, data: { list_id: list, title: "Milk" } });

    // Alice's device writes to both: the task by its id, a new task in the list by the list's.
    await phone.client.upsert("tasks", milk, { title: "Milk (2 l)" });
    await phone.client.create("tasks", { list_id: list, title: "Bread" });
    expect(await phone.client.sync()).toMatchObject({ applied: 2, rejected: 0 });
    const rows = await asUser(bob, (tx) => tx<{ title: string }[]>`select title from public.tasks where list_id = ${list} order by title`);
    expect(rows.map((r) => r.title)).toEqual(["Bread", "Milk (2 l)"]);
  });

  it("a user whose id the project chose: session, whoami, their personal list on their device, devices and export", async () => {
    const userId = nonRfcUuid();
    const user = await createTestUser({ userId });
    const installationId = nonRfcUuid();
    const phone = await device(user, installationId);
    expect(phone.session).toMatchObject({ created: true, body: { session: { user_id: userId }, user: { id: userId }, device: { installation_id: installationId } } });
    expect(await phone.api.whoami()).toMatchObject({ user_id: userId, session_id: user.sessionId });

    // Their personal list's id is their user id.
    await settled();
    await phone.client.sync();
    expect((await phone.client.get("lists", userId))?.data).toMatchObject({ title: "Personal" });
    const task = await phone.client.create("tasks", { list_id: userId, title: "Call Ada" });
    expect(await phone.client.sync()).toMatchObject({ applied: 1, rejected: 0 });
    const [row] = await adminSql<{ list_id: string }[]>`select list_id::text from public.tasks where id = ${task}`;
    expect(row.list_id).toBe(userId);

    expect((await phone.api.listDevices()).devices).toEqual([expect.objectContaining({ installation_id: installationId, current: true })]);
    expect((await phone.api.exportAccount()).account.id).toBe(userId);
  });
});
