// An app follows the docs' recipes (docs/sync.md's public.notes, docs/security-model.md's
// public.boards, public.board_members and public.task_links) in migrations of its own, which
// every test database holds: a test that creates a table, index or function of the same name
// fails "already exists" for that app, a failure docs/security-model.md (step 6) does not
// promise. Tests name their own objects with the test-only prefix `tidesync_test_` instead
// (a test that runs a recipe rewrites its names: tests/integration/sync-recipe-rechecks.test.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const RECIPES = ["docs/sync.md", "docs/security-model.md"];
const TESTS = ["tests", "supabase/tests", "client/test"];
// A name created (group 1); for an index, the table it is on (group 2).
const CREATED = /create (?:or replace )?(?:table|(?:unique )?index|function)(?: concurrently)?(?: if not exists)? (?:public\.|app_private\.)?([a-z_][a-z0-9_]*)\b(?: on (?:only )?public\.([a-z_][a-z0-9_]*))?/gi;

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : /\.(ts|sql)$/.test(entry.name) ? [join(dir, entry.name)] : []
  );
}

/** The tables, indexes and functions a recipe has an app create (an index's table too: `task_links`). */
function recipeNames(): Set<string> {
  const names = new Set<string>();
  for (const doc of RECIPES) {
    const text = readFileSync(join(ROOT, doc), "utf8").replace(/\s+/g, " ");
    // `create or replace` in the docs replaces tidesync's own hooks: not an app's new object.
    for (const m of text.matchAll(CREATED)) if (!/or replace/i.test(m[0])) for (const name of [m[1], m[2]]) if (name) names.add(name.toLowerCase());
  }
  return names;
}

describe("tests' own tables, indexes and functions", () => {
  const recipes = recipeNames();

  it("finds the recipes' names", () => {
    expect([...recipes]).toEqual(expect.arrayContaining(["notes", "notes_created_by_idx", "boards", "board_members", "add_board_creator_as_owner", "task_links"]));
  });

  it("take no name a recipe gives an app's", () => {
    const taken = TESTS.flatMap(files).flatMap((file) =>
      [...readFileSync(join(ROOT, file), "utf8").replace(/\s+/g, " ").matchAll(CREATED)]
        .filter((m) => recipes.has(m[1].toLowerCase())).map((m) => `${file}: ${m[1]}`));
    expect(taken, "an app following docs/sync.md or docs/security-model.md creates these too: prefix them tidesync_test_").toEqual([]);
  });
});
