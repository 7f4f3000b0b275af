// docs/security-model.md, "Functions that bypass RLS, and why each is safe", is the DBA's list of
// every SECURITY DEFINER function of ours. Checked against the catalog of the migrated database: the
// table names each one and no other, and what the page says of all of them holds (an empty
// search_path, the unexposed app_private schema, no EXECUTE for public, none for anon but
// receivable_release_channels() and ota_update_hidden(…), the Expo manifest endpoint's). A function added as security definer without its row fails here,
// an app's own too, saying what to add.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { adminSql } from "../support/harness.ts";

const DOC = path.join(import.meta.dirname, "../../docs/security-model.md");

/** The functions the table's first column names (`app_private.f(…)`, or `g()` after it in the same cell). */
async function documentedFunctions(): Promise<string[]> {
  const text = await readFile(DOC, "utf8");
  const start = text.indexOf("## Functions that bypass RLS");
  expect(start, "the section exists").toBeGreaterThan(-1);
  const section = text.slice(start, text.indexOf("\n## ", start + 1));
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const cell = line.split(" | ")[0];
    for (const match of cell.matchAll(/`(?:app_private\.)?([a-z_][a-z0-9_]*)\(/g)) names.add(match[1]);
  }
  return [...names].sort();
}

/** Our SECURITY DEFINER functions: every schema but Postgres', the platform's, extensions' and the pgTAP helpers'. */
async function definerFunctions() {
  return await adminSql<{ schema: string; name: string; signature: string; config: string[] | null; anon: boolean; public: boolean }[]>`
    select n.nspname as schema, p.proname as name, p.oid::regprocedure::text as signature, p.proconfig as config,
           has_function_privilege('anon', p.oid, 'execute') as anon,
           exists (select 1 from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a where a.grantee = 0) as public
      from pg_catalog.pg_proc p
      join pg_catalog.pg_namespace n on n.oid = p.pronamespace
     where p.prosecdef
       and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'auth', 'storage', 'realtime', '_realtime',
                             'graphql', 'graphql_public', 'vault', 'pgsodium', 'pgsodium_masks', 'pgbouncer', 'net',
                             'supabase_functions', 'supabase_migrations', 'cron', '_analytics', 'pgtle', 'extensions', 'tests')
       and n.nspname not like 'pg\\_%'
       and not exists (select 1 from pg_catalog.pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
     order by 2`;
}

describe("docs/security-model.md: the functions that bypass RLS", () => {
  it("names every SECURITY DEFINER function of ours, and no other", async () => {
    const functions = await definerFunctions();
    expect(functions.length, "the check sees our functions (it is not vacuous)").toBeGreaterThan(20);
    expect(functions.map((f) => f.name)).toContain("revoke_session");
    const documented = await documentedFunctions();
    const missing = [...new Set(functions.map((f) => f.name))].filter((name) => !documented.includes(name));
    // An app's own too (docs/security-model.md step 4's add_board_creator_as_owner): it is the DBA's list.
    expect(missing, "SECURITY DEFINER but not in docs/security-model.md's \"Functions that bypass RLS\": add a row for each "
      + "(| `app_private.<name>()` | why definer | what it can do |)").toEqual([]);
    expect(documented, "named in that table but not a SECURITY DEFINER function of ours").toEqual([...new Set(functions.map((f) => f.name))].sort());
  });

  it("what the page says of them holds: app_private, an empty search_path, no EXECUTE for public, none for anon but the Expo manifest endpoint's two", async () => {
    const functions = await definerFunctions();
    expect(functions.filter((f) => f.schema !== "app_private").map((f) => f.signature)).toEqual([]);
    expect(functions.filter((f) => !(f.config ?? []).includes('search_path=""')).map((f) => f.signature)).toEqual([]);
    expect(functions.filter((f) => f.public).map((f) => f.signature)).toEqual([]);
    expect(functions.filter((f) => f.anon).map((f) => f.signature)).toEqual(["app_private.ota_update_hidden(text,text,uuid[],uuid[])", "app_private.receivable_release_channels()"]);
  });
});
