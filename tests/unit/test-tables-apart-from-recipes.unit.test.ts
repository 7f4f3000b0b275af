// An app follows the docs' recipes (docs/sync.md's public.notes, docs/security-model.md's
// public.boards, public.board_members and public.task_links) in migrations of its own, which
// every test database holds: a test that creates a table, index or function of the same name
// fails "already exists" for that app, a failure docs/security-model.md (step 6) does not
// promise. Tests name their own objects with the test-only prefix `tidesync_test_` instead
// (a test that runs a recipe rewrites its names: tests/integration/sync-recipe-rechecks.test.ts).
// Not only the recipes' names: an app names its own tables as it likes (comments, items, events),
// so every table, view, function, type, domain, sequence or index a test creates where an app's
// migrations create theirs (public, app_private, or unqualified: public) is named tidesync_test_…,
// unless it is tidesync's own (a migration's hook a test replaces) or temporary.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const RECIPES = ["docs/sync.md", "docs/security-model.md"];
const TESTS = ["tests", "supabase/tests", "client/test", "bench"];
const PREFIX = "tidesync_test_";
// The schemas an app's migrations create in: public (docs/sync.md's notes) and app_private
// (docs/security-model.md's add_board_creator_as_owner); an unqualified name lands in public.
const SHARED = new Set(["public", "app_private"]);
// A name created (group 1); for an index, the table it is on (group 2).
const CREATED = /create (?:or replace )?(?:table|(?:unique )?index|function)(?: concurrently)?(?: if not exists)? (?:public\.|app_private\.)?([a-z_][a-z0-9_]*)\b(?: on (?:only )?public\.([a-z_][a-z0-9_]*))?/gi;

// Any object a test creates: or replace (1), temporary (2), kind (3), schema (4), name (5, up to an
// interpolation), for an index the schema of the table it is on (6).
const ANY_CREATED = new RegExp(
  String.raw`\bcreate\s+(or\s+replace\s+)?(temp(?:orary)?\s+|unlogged\s+)?(table|view|materialized\s+view|function|procedure|type|domain|sequence|(?:unique\s+)?index)` +
    String.raw`\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:"?([a-z_][a-z0-9_]*|\$\{[^}]*\})"?\s*\.\s*)?"?([a-z_][a-z0-9_]*(?:\$\{)?|\$\{)` +
    // (looked ahead, not consumed: a create later in the text is still found)
    String.raw`(?=[^;\`]*?\s+on\s+(?:only\s+)?"?([a-z_][a-z0-9_]*|\$\{[^}]*\})"?\s*\.|)`,
  "gi",
);

// A name given by a rename: kind (1), schema of the object renamed (2), new name (3).
const RENAMED = new RegExp(
  String.raw`\balter\s+(table|view|materialized\s+view|function|procedure|type|domain|sequence|index)\s+(?:if\s+exists\s+)?(?:only\s+)?` +
    String.raw`(?:"?([a-z_][a-z0-9_]*)"?\s*\.\s*)?"?[a-z_$][^\s;]*\s+rename\s+to\s+"?([a-z_][a-z0-9_]*(?:\$\{)?|\$\{)`,
  "gi",
);

// A column added to a table the test did not create (an app's migrations may add theirs of that name):
// schema (1), table (2), column (3).
const ADDED_COLUMN = new RegExp(
  String.raw`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?(?:"?([a-z_][a-z0-9_]*)"?\s*\.\s*)?"?([a-z_][a-z0-9_]*)"?\s+` +
    String.raw`add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?"?([a-z_][a-z0-9_]*)`,
  "gi",
);

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

/** schema.name of every object the project's migrations create (its hooks a test may replace). */
function projectNames(): Set<string> {
  const names = new Set<string>();
  for (const file of files("supabase/migrations"))
    for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(ANY_CREATED))
      if (m[4] && m[5]) names.add(`${m[4]}.${m[5]}`.toLowerCase());
  return names;
}

/** `file:line: kind schema.name` of each object a test creates in a schema an app shares without the prefix. */
export function plainNamedTestObjects(file: string, text: string, project: Set<string>): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(ANY_CREATED)) {
    const [, orReplace, temporary, kind, qualifier, name, indexQualifier] = m;
    const index = /index/i.test(kind);
    if (temporary || (index && !qualifier && !indexQualifier && /^on$/i.test(name))) continue; // `create index on …`: named by Postgres
    const schema = (index ? indexQualifier : qualifier)?.toLowerCase() ?? "public";
    if (schema === "pg_temp" || !SHARED.has(schema)) continue;
    if (name.toLowerCase().startsWith(PREFIX)) continue;
    if (orReplace && project.has(`${schema}.${name.toLowerCase()}`)) continue; // tidesync's own hook, replaced
    const line = text.slice(0, m.index).split("\n").length;
    found.push(`${file}:${line}: ${kind.toLowerCase().replace(/\s+/g, " ")} ${schema}.${name.replace("${", "${…}")}`);
  }
  for (const m of text.matchAll(RENAMED)) {
    const [, kind, qualifier, name] = m;
    const schema = qualifier?.toLowerCase() ?? "public";
    if (!SHARED.has(schema) || name.toLowerCase().startsWith(PREFIX)) continue;
    const line = text.slice(0, m.index).split("\n").length;
    found.push(`${file}:${line}: ${kind.toLowerCase().replace(/\s+/g, " ")} ${schema}.${name.replace("${", "${…}")} (renamed to)`);
  }
  for (const m of text.matchAll(ADDED_COLUMN)) {
    const [, qualifier, table, column] = m;
    const schema = qualifier?.toLowerCase() ?? "public";
    if (!SHARED.has(schema) || table.toLowerCase().startsWith(PREFIX) || column.toLowerCase().startsWith(PREFIX)) continue;
    if (/^(constraint|primary|unique|check|foreign|exclude)$/i.test(column)) continue; // `add constraint …`: not a column
    const line = text.slice(0, m.index).split("\n").length;
    found.push(`${file}:${line}: column ${schema}.${table}.${column} (added)`);
  }
  return found;
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

  it(`are named ${PREFIX}… wherever an app's migrations create theirs`, () => {
    const project = projectNames();
    expect(project).toContain("app_private.before_account_purge");
    const plain = TESTS.flatMap(files).filter((file) => join(ROOT, file) !== import.meta.filename).flatMap((file) => plainNamedTestObjects(file, readFileSync(join(ROOT, file), "utf8"), project));
    expect(plain, `an app may name its own tables, views, functions or types so too ("already exists", or a test run against the app's): prefix them ${PREFIX}`).toEqual([]);
  });

  // (This file's samples are not scanned.)
  it("the check finds a plain name, and leaves temporary and tidesync's own objects alone", () => {
    const project = new Set(["app_private.before_account_purge"]);
    const sample = [
      "create table public.comments (id uuid);",
      "create temporary table ids as select 1;",
      "create table public.tidesync_test_comments (id uuid);",
      "create index comments_body_idx on public.tidesync_test_comments (body);",
      "create or replace function app_private.before_account_purge(p uuid) returns void;",
      "create function app_private.fail_ledger_${suffix}() returns trigger;",
      "create type items as enum ('a');",
      "create function pg_temp.usage() returns int;",
      "create index on public.tidesync_test_comments (id);",
      "create table public.${name} (id uuid);",
      "alter table public.tidesync_test_boards rename to boards_renamed;",
      "alter table public.tidesync_test_boards rename column name to title;",
      "create index helper_idx on tests.helpers (id); create table public.after_an_index (id uuid);",
      "alter table public.tasks add column parent_id uuid;",
      "alter table public.tasks add column tidesync_test_parent_id uuid; alter table tidesync_test_comments add extra text;",
      "alter table only lists add if not exists color2 text; alter table public.tasks add constraint c check (true);",
    ].join("\n");
    expect(plainNamedTestObjects("t.sql", sample, project)).toEqual([
      "t.sql:1: table public.comments",
      "t.sql:4: index public.comments_body_idx",
      "t.sql:6: function app_private.fail_ledger_${…}",
      "t.sql:7: type public.items",
      "t.sql:10: table public.${…}",
      "t.sql:13: table public.after_an_index",
      "t.sql:11: table public.boards_renamed (renamed to)",
      "t.sql:14: column public.tasks.parent_id (added)",
      "t.sql:16: column public.lists.color2 (added)",
    ]);
  });
});
