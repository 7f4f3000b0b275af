// "A list always keeps an owner" under concurrency: two owners of one list who
// step down, or demote each other, at the same moment through the Data API
// (role authenticated with their claims, as PostgREST does). Each alone is
// allowed, since the other is still an owner; together they would leave the
// list without one. The second must wait for the first and then be refused
// (READ COMMITTED, PostgREST's), or fail as a serialization error (REPEATABLE
// READ): never both commit.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { adminSql, type TestUser } from "../support/harness.ts";
import { type HeldTransaction, holdTransaction, type Isolation, waitersOf } from "../support/held-transactions.ts";
import { sharedList } from "../support/shared-lists.ts";

const twoOwners = () => sharedList("owner");

async function owners(list: string): Promise<string[]> {
  const rows = await adminSql<{ user_id: string }[]>`select user_id::text from public.list_members where list_id = ${list} and role = 'owner' order by user_id`;
  return rows.map((r) => r.user_id);
}

const leave = (user: TestUser, list: string) => (tx: postgres.TransactionSql) =>
  tx`delete from public.list_members where list_id = ${list} and user_id = ${user.userId}`;
const demote = (user: TestUser, list: string) => (tx: postgres.TransactionSql) =>
  tx`update public.list_members set role = 'viewer' where list_id = ${list} and user_id = ${user.userId}`;

type Owners = Awaited<ReturnType<typeof twoOwners>>;
type Change = (o: Owners) => (tx: postgres.TransactionSql) => Promise<unknown>;

/**
 * Alice's change runs and stays uncommitted; Bob's must then wait for a lock
 * (without the fix it went through at once: both committed). Both sessions
 * are released whatever happens; Alice's commits.
 */
async function race(isolation: Isolation, first: Change, second: Change) {
  const o = await twoOwners();
  const a = holdTransaction(first(o), { as: o.alice, isolation });
  let b: HeldTransaction | undefined;
  try {
    await a.ran;
    b = holdTransaction(second(o), { as: o.bob, isolation });
    await waitersOf(await a.pid);
  } finally {
    b?.commit();
    a.commit();
  }
  await a.done;
  return { o, b: b! };
}

describe("a list keeps an owner when its owners step down at the same moment", () => {
  const cases: [string, Change, Change][] = [
    ["both owners leave", (o) => leave(o.alice, o.list), (o) => leave(o.bob, o.list)],
    ["each owner demotes the other", (o) => demote(o.bob, o.list), (o) => demote(o.alice, o.list)],
  ];
  for (const [name, first, second] of cases) {
    it(`${name} (read committed): the second waits for the first, then is refused`, async () => {
      const { o, b } = await race("read committed", first, second);
      await expect(b.done).rejects.toMatchObject({ code: "23514", constraint_name: "list_members_keep_an_owner" });
      expect(await owners(o.list)).toHaveLength(1);
    });

    it(`${name} (repeatable read): the second fails as a serialization error`, async () => {
      const { o, b } = await race("repeatable read", first, second);
      await expect(b.done).rejects.toMatchObject({ code: "40001" });
      expect(await owners(o.list)).toHaveLength(1);
    });
  }
});
