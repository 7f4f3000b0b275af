// docs/security-model.md opens with "nearly every [policy] is for one role" and names the
// exceptions: a DBA reads that list as complete. Every policy of the generated reference
// schema (sql/, kept fresh by `npm run generate:check`) that is for more than one role, or
// for `public` (every role), must be named there in bold; a new one fails here until it is,
// an app's own too (step 4's "Nobody reads board memberships"): the message says what to add.
// Its recipe for an app's own synced table is copied as written: its policies must name the
// caller as `(select app_private.live_uid())` (a signed-out token opens nothing), and its
// recheck triggers judge deletes and the old rows of updates too (a move out of a scope).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sqlFiles(join(dir, entry.name)) : entry.name.endsWith(".sql") ? [join(dir, entry.name)] : []
  );
}

/** Every policy of sql/ with its table and roles, as the generator writes it (`create policy "…"`, `on t` … `to a, b`). */
function policies(): { name: string; table: string; roles: string[] }[] {
  return sqlFiles(join(ROOT, "sql")).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/^create policy "((?:[^"]|"")+)"\n  on (\S+)\n(?:  (?!to ).*\n)*  to (.+)$/gm)]
      .map((m) => ({ name: m[1].replaceAll('""', '"'), table: m[2], roles: m[3].split(",").map((r) => r.trim()) }))
  );
}

describe("docs/security-model.md's opening", () => {
  const doc = readFileSync(join(ROOT, "docs/security-model.md"), "utf8");
  const opening = doc.slice(0, doc.indexOf("\n## ")).replace(/\s+/g, " ");
  const shared = policies().filter((p) => p.roles.length > 1 || p.roles[0] === "public");

  it("finds the policies for more than one role", () => {
    expect(policies().length).toBeGreaterThan(50);
    expect(shared.map((p) => p.name)).toEqual(expect.arrayContaining([
      "Callers can read releases of channels they may receive",
      "Only signed-in users receive on tidesync's topics",
    ]));
  });

  it.each(shared.map((p) => [p.name, p.roles.join(", "), p.table]))("names %s (to %s) among the exceptions", (name, roles, table) => {
    expect(opening.includes(`**${name}**`), `"${name}" (on ${table}) is for ${roles}, not one role, but docs/security-model.md's opening `
      + `does not name it: add it to the exceptions there, in bold (**${name}**), with its table and roles`).toBe(true);
  });
});

describe("docs/security-model.md's recipe (Making a new table syncable)", () => {
  const doc = readFileSync(join(ROOT, "docs/security-model.md"), "utf8");
  const start = doc.indexOf("## Making a new table syncable");
  const recipe = doc.slice(start, doc.indexOf("\n## ", start + 1)).replace(/\s+/g, " ");

  it("compares the caller as live_uid(), never as auth.uid() (a signed-out session's token)", () => {
    expect(start).toBeGreaterThan(0);
    expect(recipe).toContain("(select app_private.live_uid())");
    expect(recipe).not.toContain("(select auth.uid())");
  });

  it("rechecks a write after insert, after update with the old rows (a move out of a scope) and after delete", () => {
    const rechecks = [...recipe.matchAll(/create trigger (writer_role_rechecked_on_\w+) (after \w+) on public\.<table> referencing (.+?) for each statement when \(current_user = 'authenticated'\) execute function app_private\.recheck_write_into_list\(/g)]
      .map((m) => [m[1], m[2], m[3]]);
    expect(rechecks).toEqual([
      ["writer_role_rechecked_on_insert", "after insert", "new table as new_rows"],
      ["writer_role_rechecked_on_update", "after update", "old table as old_rows new table as new_rows"],
      ["writer_role_rechecked_on_delete", "after delete", "old table as old_rows"],
    ]);
  });
});

// docs/sync.md's recipe for the same table is run as written (tests/integration/sync-recipe-rechecks.test.ts):
// its recheck triggers are step 3's, copied for public.notes, so the two docs cannot drift apart.
describe("docs/sync.md's recipe (Making a table syncable)", () => {
  const security = readFileSync(join(ROOT, "docs/security-model.md"), "utf8");
  const sync = readFileSync(join(ROOT, "docs/sync.md"), "utf8");
  const stepThree = /```sql\n(\s*create trigger writer_role_rechecked_on_insert[\s\S]*?)```/.exec(security)?.[1] ?? "";
  const recipe = /```sql\n([\s\S]*?)```/.exec(sync.slice(sync.indexOf("\n## Making a table syncable")))?.[1] ?? "";
  const unindented = (text: string) => text.split("\n").map((line) => line.trim()).filter(Boolean).join("\n");

  it("holds step 3's recheck triggers of docs/security-model.md, for public.notes and its scope column", () => {
    expect(stepThree).toContain("public.<table>");
    const forNotes = unindented(stepThree).replaceAll("public.<table>", "public.notes").replaceAll("'<scope column>'", "'list_id'");
    expect(unindented(recipe)).toContain(forNotes);
  });
});
