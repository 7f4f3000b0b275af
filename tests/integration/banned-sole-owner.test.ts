// The only owner of a shared list banned by Supabase Auth (auth.users.banned_until in the future;
// `ban_duration: "876000h"` is its "forever"): a ban may end, so it hands nothing over
// (docs/security-model.md, "Sharing"). The banned user stays the owner, nobody manages the list
// and their codes admit nobody while the ban lasts; the ban's end gives both back, and deleting
// the account hands the list over.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser, pushOk, share, upsert } from "../support/shared-lists.ts";

const attempt = (p: Promise<unknown>) => p.then(() => "ok", (e: any) => e.code as string);
const invite = (user: TestUser, list: string) =>
  asUser(user, (tx) => tx`select public.create_list_invite(${list}, 'viewer') as code`).then((rows) => rows[0].code as string);
const accept = (user: TestUser, code: string) => attempt(asUser(user, (tx) => tx`select public.accept_list_invite(${code})`));
const ban = (user: TestUser, hours: number) =>
  adminSql`update auth.users set banned_until = now() + make_interval(hours => ${hours}) where id = ${user.userId}`;
const owners = (list: string) => adminSql`select user_id from public.list_members where list_id = ${list} and role = 'owner'`
  .then((rows) => rows.map((r) => r.user_id));

async function bannedOwnersList() {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const list = randomUUID();
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
  await share(alice, list, bob, "editor");
  const code = await invite(alice, list);
  await ban(alice, 876000);
  return { alice, bob, list, code };
}

describe("the only owner of a shared list is banned", () => {
  it("stays its owner; nobody manages it, nor does their code admit anyone, until the ban ends", async () => {
    const { alice, bob, list, code } = await bannedOwnersList();
    const carol = await createTestUser();

    expect(await owners(list)).toEqual([alice.userId]);
    expect(await attempt(invite(bob, list))).toBe("42501");
    await asUser(bob, (tx) => tx`update public.list_members set role = 'owner' where list_id = ${list} and user_id = ${bob.userId}`);
    expect(await owners(list)).toEqual([alice.userId]);
    expect(await accept(carol, code)).toBe("P0002"); // as a wrong code

    await ban(alice, -1); // the ban ends
    expect(await accept(carol, code)).toBe("ok");
    expect(await attempt(invite(alice, list))).toBe("ok");
  });

  it("is handed over when the banned owner's account is deleted", async () => {
    const { alice, bob, list } = await bannedOwnersList();
    await adminSql`delete from auth.users where id = ${alice.userId}`;

    expect(await owners(list)).toEqual([bob.userId]);
    expect(await attempt(invite(bob, list))).toBe("ok");
  });
});
