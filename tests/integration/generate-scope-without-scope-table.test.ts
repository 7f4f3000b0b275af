// `npm run generate` refuses a synced table whose scope column is no foreign key to a synced
// table (scripts/generate/sync-collection-checks.ts): sync lists a row to the members of its
// scope, and a user, or a table that is not synced, has none. enable_sync takes any not-null uuid
// column, so the most common Supabase table, `user_id uuid not null references auth.users` with
// a policy `(select auth.uid()) = user_id`, made syncable by its user_id, passed the migration;
// then generate answered "a scope column must reference a synced scope table by foreign key"
// alone (thrown before the other refusals were collected), with no statement and no way on. Its
// refusal now says how to scope such a table, among the other refusals. (The statements it
// suggests are run through the real function by tests/integration/table-each-user-keeps.test.ts.)
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { readCheckedSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "../support/harness.ts";

const TABLE = "public.tidesync_test_own_notes";

/** What `npm run generate` reads (rejects with its refusal) after `statements` (all rolled back). */
async function generateWith(statements: string[]): Promise<string[]> {
  const rollback = new Error("rolled back on purpose");
  let names: string[] = [];
  await adminSql.begin(async (tx) => {
    for (const statement of statements) await tx.unsafe(statement);
    names = (await readCheckedSyncCollections(tx as unknown as postgres.Sql, () => {})).map((c) => c.name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return names;
}

/** The table scoped by `scope`, its grants right, made syncable by `scope`. */
function ownNotes(scope: string): string[] {
  return [
    `create table public.tidesync_test_own_notes (id uuid primary key default gen_random_uuid(), ${scope}, body text)`,
    `alter table ${TABLE} enable row level security`,
    `revoke all on ${TABLE} from public, anon, authenticated, service_role`,
    `grant select, delete, insert (id, body), update (id, body) on ${TABLE} to authenticated`,
  ];
}

describe("npm run generate and a scope column that is no key to a synced scope table", () => {
  it("refuses user_id references auth.users, saying how to scope the table by the user's personal list, among the other refusals", async () => {
    const refusal = generateWith([
      ...ownNotes("user_id uuid not null default auth.uid() references auth.users (id) on delete cascade"),
      `create policy "own" on ${TABLE} for all to authenticated using ((select auth.uid()) = user_id) with check ((select auth.uid()) = user_id)`,
      `select app_private.enable_sync('${TABLE}', 'user_id')`,
      // another mistake, in another check: both are named in one run
      `revoke delete on ${TABLE} from authenticated`,
    ]);
    await expect(refusal).rejects.toThrow(new RegExp(
      `${TABLE}: its scope column user_id references auth\\.users, not a synced scope table, .*personal list.*:\\n` +
        `  select app_private\\.disable_sync\\('${TABLE}'\\);\\n` +
        `  alter table ${TABLE} add column list_id uuid references public\\.lists \\(id\\) on delete cascade;\\n` +
        `  update ${TABLE} t set list_id = t\\.user_id where exists \\(select 1 from public\\.list_members m where m\\.list_id = t\\.user_id and m\\.user_id = t\\.user_id and m\\.role = 'owner'\\);\\n` +
        `  alter table ${TABLE} alter column list_id set default auth\\.uid\\(\\), alter column list_id set not null;\\n` +
        `.*select app_private\\.enable_sync\\('${TABLE}', 'list_id'\\);\\n` +
        `.*docs/sync\\.md, "A table each user keeps to themselves".*step 4`,
      "s",
    ));
    await expect(refusal).rejects.toThrow(`${TABLE}: authenticated has a delete policy ("own") but no DELETE privilege`);
  });

  it("refuses a scope column that references a table not synced, saying to make it a scope table or scope by a list", async () => {
    await expect(generateWith([
      `create table public.tidesync_test_projects (id uuid primary key default gen_random_uuid())`,
      ...ownNotes("project_id uuid not null references public.tidesync_test_projects (id) on delete cascade"),
      `select app_private.enable_sync('${TABLE}', 'project_id')`,
    ])).rejects.toThrow(
      `${TABLE}: its scope column project_id references public.tidesync_test_projects, not a synced scope table, so no device ` +
        `would get its rows`,
    );
    await expect(generateWith([
      `create table public.tidesync_test_projects (id uuid primary key default gen_random_uuid())`,
      ...ownNotes("project_id uuid not null references public.tidesync_test_projects (id) on delete cascade"),
      `select app_private.enable_sync('${TABLE}', 'project_id')`,
    ])).rejects.toThrow(/select app_private\.enable_sync\('public\.tidesync_test_projects', 'id'\).*step 4/s);
  });

  it("refuses a scope column without a foreign key, naming the key to add", async () => {
    await expect(generateWith([
      ...ownNotes("list_id uuid not null"),
      `select app_private.enable_sync('${TABLE}', 'list_id')`,
    ])).rejects.toThrow(
      `${TABLE}: its scope column list_id is no foreign key, so no device would get its rows`,
    );
    await expect(generateWith([
      ...ownNotes("list_id uuid not null"),
      `select app_private.enable_sync('${TABLE}', 'list_id')`,
    ])).rejects.toThrow(
      `alter table ${TABLE} add foreign key (list_id) references public.lists (id) on delete cascade`,
    );
  });
});
