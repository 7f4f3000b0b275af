// `npm run generate` as a developer meets it after a migration that makes a
// synced table the way the app-developer review did, with every mistake it
// found (no recheck triggers, no SELECT, the scope key without on delete
// cascade, Supabase's default privileges left on created_by, RLS disabled
// afterwards): it exits non-zero, names every mistake with the statement that
// fixes it, in one run, writes nothing, and prints no Node stack trace (the
// refusal is the message, not a crash). Run on a copy of what generate reads
// (scripts, functions, supabase, fixtures) with the migration added; the
// product's tree is not changed.
import { cp, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, ROOT } from "../../scripts/lib/paths.ts";
import { run, type RunResult } from "../../scripts/lib/run.ts";

const TABLE = "public.tidesync_test_cli_notes";

// The review's migration: docs/sync.md's recipe as a developer might have got it wrong.
const MIGRATION = `
create table public.tidesync_test_cli_notes (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id),
  body text not null,
  created_by uuid default auth.uid() references auth.users (id) on delete set null
);
alter table ${TABLE} enable row level security;
grant insert (id, list_id, body), update (id, list_id, body) on ${TABLE} to authenticated;
revoke select on ${TABLE} from authenticated;
select app_private.enable_sync('${TABLE}', 'list_id');
alter table ${TABLE} disable row level security;
`;

describe("npm run generate refusing a migration's synced table", () => {
  let tree: string;
  let result: RunResult;
  beforeAll(async () => {
    tree = await mkdtemp(path.join(os.tmpdir(), "tidesync-generate-cli-"));
    for (const part of ["scripts", "functions", "supabase", "fixtures", "package.json", "tsconfig.json"]) {
      await cp(path.join(ROOT, part), path.join(tree, part), { recursive: true });
    }
    await symlink(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"));
    await writeFile(path.join(tree, "supabase/migrations/29991231000000_tidesync_test_cli_notes.sql"), MIGRATION);
    result = await run(bin("tsx"), [path.join(tree, "scripts/generate/index.ts")], { cwd: tree, timeoutMs: 120_000 });
  }, 180_000);
  afterAll(async () => {
    if (tree) await rm(tree, { recursive: true, force: true });
  });

  it("exits 1 with the refusal alone: no stack trace, nothing written", async () => {
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stderr).not.toMatch(/^(Sync\w*)?Error:/m);
    expect(result.stderr).toMatch(/^npm run generate refuses the synced tables of supabase\/migrations \(it wrote nothing\):$/m);
    expect(await readdir(tree)).not.toContain("docs"); // docs/openapi.json is written only when everything passed
  });

  it("names every mistake of the table in that one run, each with the statement that fixes it", () => {
    const lines = result.stderr.split("\n").filter((line) => line.startsWith(`${TABLE}: `));
    expect(lines.map((line) => line.slice(TABLE.length + 2, line.indexOf(",")))).toEqual([
      "its writes into a list are not judged again by the writer's role after the locks they waited for (missing: writer_role_rechecked_on_insert",
      "row level security is disabled",
      "authenticated may not read it (no SELECT privilege)",
      `its scope column list_id references public.lists (tidesync_test_cli_notes_list_id_fkey) on delete no action`,
      "authenticated may insert and update created_by",
    ]);
    expect(result.stderr).toContain(`alter table ${TABLE} enable row level security`);
    expect(result.stderr).toContain(`grant select on ${TABLE} to authenticated`);
    expect(result.stderr).toContain(`foreign key (list_id) references public.lists (id) on delete cascade`);
    expect(result.stderr).toContain(`revoke all on ${TABLE} from public, anon, authenticated, service_role;`);
    expect(result.stderr).toContain(`  create or replace trigger writer_role_rechecked_on_delete after delete on ${TABLE} referencing old table as old_rows`);
  });
});
