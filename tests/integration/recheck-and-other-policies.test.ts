// docs/security-model.md, step 3: the recheck triggers a list-scoped synced table needs judge a
// write by the writer's role in the row's list alone. A policy of the developer's that lets a
// write in by something else, as the usual admin policy does by a JWT claim (`(auth.jwt() ->
// 'app_metadata' ->> 'role') = 'admin'`), passes RLS and is then refused at the trigger (42501
// "your role in list … does not allow this write"): an adopting developer's review found its
// Data API updates failing with no word of it in the docs. What the docs say to do instead works:
// the service role (which the triggers' `when (current_user = 'authenticated')` leaves out), a
// security definer function that checks the claim itself, or a recheck function of one's own
// that lets the claim's writers through and still judges everyone else.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCheckedSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser, signIn } from "../support/auth-users.ts";
import { recheckTriggers } from "../support/recheck-triggers.ts";

const T = "public.tidesync_test_admin_notes";
const EDITOR = `list_id in (select unnest(app_private.my_list_ids('editor')))`;
const VIEWER = `list_id = any ((select app_private.my_list_ids('viewer'))::uuid[])`;
const ADMIN = `(auth.jwt() -> 'app_metadata' ->> 'role') = 'admin'`;

let database: TempDatabase;
let admin: postgres.Sql;

/** The claims PostgREST sets for a new session of a new user, with `app_metadata` as Supabase Auth signs it. */
async function newUser(appMetadata: Record<string, string> = {}): Promise<{ userId: string; claims: string }> {
  const userId = randomUUID();
  await insertAuthUser(admin, userId);
  const claims = { ...JSON.parse(await signIn(admin, userId)), app_metadata: { provider: "email", ...appMetadata } };
  return { userId, claims: JSON.stringify(claims) };
}

/** A Data API statement as the user (role authenticated with their claims): what it did, or its error's code and message. */
async function asUser(user: { claims: string }, statement: string, params: string[] = []): Promise<string> {
  return await admin.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${user.claims}, true), set_config('role', 'authenticated', true)`;
    const rows = await tx.unsafe(statement, params);
    return `${rows.count} row${rows.count === 1 ? "" : "s"}`;
  }).catch((error) => `${error.code}: ${error.message}`) as string;
}

let alice: { userId: string; claims: string };
let boss: { userId: string; claims: string };
let note: string;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_recheck_admin", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 2, onnotice: () => {} });
  // A list-scoped table as docs/sync.md's recipe makes it, with the developer's admin policies beside.
  for (const statement of [
    `create table public.tidesync_test_admin_notes (id uuid primary key default gen_random_uuid(),
       list_id uuid not null references public.lists (id) on delete cascade, body text not null)`,
    `alter table ${T} enable row level security`,
    `revoke all on ${T} from public, anon, authenticated, service_role`,
    `grant select, delete, insert (id, list_id, body), update (id, list_id, body) on ${T} to authenticated`,
    `create policy "read" on ${T} for select to authenticated using (${VIEWER})`,
    `create policy "add" on ${T} for insert to authenticated with check (${EDITOR})`,
    `create policy "change" on ${T} for update to authenticated using (${VIEWER.replace("viewer", "editor")}) with check (${EDITOR})`,
    `create policy "delete" on ${T} for delete to authenticated using (${VIEWER.replace("viewer", "editor")})`,
    `create policy "admins read any" on ${T} for select to authenticated using (${ADMIN})`,
    `create policy "admins change any" on ${T} for update to authenticated using (${ADMIN})`,
    ...recheckTriggers(T),
    `select app_private.enable_sync('${T}', 'list_id')`,
  ]) await admin.unsafe(statement);
  alice = await newUser();
  boss = await newUser({ role: "admin" }); // in no list of Alice's
  note = randomUUID();
  await admin.unsafe(`insert into ${T} (id, list_id, body) values ($1, $2, 'typo')`, [note, alice.userId]);
}, 240_000);

afterAll(async () => {
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

const fix = `update ${T} set body = 'fixed' where id = $1`;

describe("step 3's recheck triggers and a policy that lets writes in by something else than a list role", () => {
  it("refuse an admin's update that the admin policy lets in, in a list where the admin is no editor", async () => {
    expect(await asUser(boss, `select id from ${T} where id = $1`, [note])).toBe("1 row"); // the policies let the admin in
    expect(await asUser(boss, fix, [note])).toMatch(/^42501: your role in list [0-9a-f-]+ does not allow this write/);
    expect(await asUser(alice, fix, [note])).toBe("1 row"); // the list's editor
  });

  it("leave out the service role (a server of the developer's with the secret key)", async () => {
    await admin.unsafe(`grant select, update on ${T} to service_role`);
    const result = await admin.begin(async (tx) => {
      await tx`set local role service_role`;
      return (await tx.unsafe(`update ${T} set body = 'by the back office' where id = $1`, [note])).count;
    });
    expect(result).toBe(1);
  });

  it("leave out a security definer function that checks the claim itself", async () => {
    await admin.unsafe(`create function public.tidesync_test_admin_set_body(p_id uuid, p_body text) returns void
      language plpgsql security definer set search_path = '' as $$
      begin
        if (select auth.jwt() -> 'app_metadata' ->> 'role') is distinct from 'admin' then
          raise exception 'only an admin may do this' using errcode = 'insufficient_privilege';
        end if;
        update ${T} set body = p_body where id = p_id;
      end $$`);
    await admin.unsafe(`revoke all on function public.tidesync_test_admin_set_body(uuid, text) from public, anon, authenticated, service_role`);
    await admin.unsafe(`grant execute on function public.tidesync_test_admin_set_body(uuid, text) to authenticated`);
    const call = `select public.tidesync_test_admin_set_body($1, 'by rpc')`;
    expect(await asUser(boss, call, [note])).toBe("1 row");
    expect((await admin.unsafe(`select body from ${T} where id = $1`, [note]))[0].body).toBe("by rpc");
    expect(await asUser(await newUser(), call, [note])).toBe("42501: only an admin may do this");
  });

  it("let an admin's Data API write through a recheck function of one's own that returns early for the claim, and still judge everyone else", async () => {
    // tasks' app_private.recheck_task_writes(), returning before its check for an admin.
    await admin.unsafe(`create function app_private.tidesync_test_recheck_admin_notes() returns trigger
      language plpgsql set search_path = '' as $$
      declare
        v_lists uuid[];
      begin
        if (select auth.jwt() -> 'app_metadata' ->> 'role') = 'admin' then
          return null; -- the admin policies alone decide an admin's writes
        end if;
        if tg_op = 'INSERT' then
          select array_agg(distinct n.list_id) into v_lists from new_rows n;
        elsif tg_op = 'UPDATE' then
          select array_agg(distinct l.list_id) into v_lists
            from (select n.list_id from new_rows n union all select o.list_id from old_rows o) l;
        else
          select array_agg(distinct o.list_id) into v_lists from old_rows o;
        end if;
        perform app_private.require_list_role(v_lists, 'editor');
        return null;
      end $$`);
    for (const statement of recheckTriggers(T)) {
      await admin.unsafe(statement.replace("create trigger", "create or replace trigger")
        .replace("app_private.recheck_write_into_list('editor', 'list_id')", "app_private.tidesync_test_recheck_admin_notes()"));
    }
    // npm run generate takes the table (any function counts, as tasks' does)
    expect((await readCheckedSyncCollections(admin, () => {})).map((c) => c.name)).toContain("tidesync_test_admin_notes");
    expect(await asUser(boss, fix, [note])).toBe("1 row");
    // A viewer whom a policy lets in by mistake is still refused by the list role.
    const viewer = await newUser();
    await admin`insert into public.list_members (list_id, user_id, role) values (${alice.userId}, ${viewer.userId}, 'viewer')`;
    await admin.unsafe(`create policy "viewers change (a mistake)" on ${T} for update to authenticated using (${VIEWER}) with check (${VIEWER})`);
    expect(await asUser(viewer, fix, [note])).toMatch(/^42501: your role in list [0-9a-f-]+ does not allow this write/);
  });
});
