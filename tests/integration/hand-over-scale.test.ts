// The hand-over of a deleted user's lists (the trigger before each row of a
// delete from auth.users, app_private.pass_lists_to_successors) costs little
// per user in a bulk delete. What a user would notice otherwise: deleting
// thousands of users at once (a dashboard multi-select, an import's clean-up)
// taking twice as long as before the hand-over after the cascade (npm run
// bench:bulk, migration 20261128000100). Counted from the statements Postgres
// ran and how they were planned, never by time; who ends up owning is
// asserted too (the succession order itself: pgTAP 501-account-deletion-hand-over).
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUsers } from "../support/auth-users.ts";
import { type Explained, inRolledBackTransaction, planRecorder } from "../support/explained.ts";

let database: TempDatabase;
let admin: postgres.Sql;
const { onnotice, explainEach } = planRecorder();

beforeAll(async () => {
  database = await createTempDatabase("tidesync_handoverscale", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice });
});

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

/** The statement that picks and promotes the successors (pass_lists_to_successors). */
const handOvers = (plans: Explained[]) => plans.filter((explained) => explained["Query Text"].includes("with owner_less as"));

describe("a bulk delete from auth.users", () => {
  it("of users who share no list runs no hand-over statement, and their lists go with them", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      await insertAuthUsers(tx, 30, "alone");
      const plans = await explainEach(tx, false, () => tx.unsafe(`delete from auth.users where email like 'alone-%'`));
      // Nobody could take their lists over: no statement (it ran once per user,
      // an UPDATE of no row whose statement triggers ran all the same).
      expect(handOvers(plans)).toHaveLength(0);
      const [{ left }] = await tx<{ left: number }[]>`
        select count(*)::integer as left from public.lists l
         where not exists (select 1 from auth.users u where u.id = l.id)`;
      expect(left).toBe(0); // each personal list (its id is its user's) went with its user
    });
  });

  it("of owners whose lists have an editor plans the hand-over once for all of them", async () => {
    await inRolledBackTransaction(admin, async (tx) => {
      await insertAuthUsers(tx, 20, "owner");
      await insertAuthUsers(tx, 20, "editor");
      // editor-n edits owner-n's personal list
      await tx.unsafe(`
        insert into public.list_members (list_id, user_id, role)
        select o.id, e.id, 'editor' from auth.users o
          join auth.users e on split_part(e.email, '@', 1) = replace(split_part(o.email, '@', 1), 'owner-', 'editor-')
         where o.email like 'owner-%'`);
      const plans = await explainEach(tx, false, () => tx.unsafe(`delete from auth.users where email like 'owner-%'`));
      const statements = handOvers(plans);
      // One per deleted owner, before its row goes (after the cascade every list has an owner again: no more).
      expect(statements).toHaveLength(20);
      // One plan for all: it names its parameter, not one call's lists (each was planned afresh: ~0.25 ms).
      const lists = (explained: Explained) => /id = ANY \((\$\d+|'[^)]*)\)/.exec(JSON.stringify(explained.Plan))?.[1];
      expect(statements.map(lists).filter((condition) => !/^\$\d+$/.test(condition ?? ""))).toEqual([]);
      const successors = await tx<{ email: string }[]>`
        select u.email from public.list_members m join auth.users u on u.id = m.user_id
         where m.role = 'owner' and m.list_id <> m.user_id`;
      // each editor owns the list they edited (and their own)
      expect(successors.map((owner) => owner.email.split("@")[0]).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `editor-${i + 1}`).sort());
    });
  });
});
