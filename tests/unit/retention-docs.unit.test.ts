// docs/retention.md promises "every kind of data tidesync keeps". Every table of ours with a
// foreign key to auth.users holds a user's data and is reached by the account purge's cascade,
// so each must have its row there, named in backticks (`name` or `schema.name`); so must every
// table of app_private, whoever's data it holds (bookkeeping grows too). Read from the generated
// reference schema (sql/, kept fresh by `npm run generate:check`), so a new table fails here
// until it is named.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const SCHEMAS = ["public", "app_private"];

function tablesReferencingUsers(): string[] {
  return SCHEMAS.flatMap((schema) => {
    const dir = join(ROOT, "sql", schema, "tables");
    return readdirSync(dir)
      .filter((file) => file.endsWith(".sql") && /REFERENCES auth\.users\(/.test(readFileSync(join(dir, file), "utf8")))
      .map((file) => `${schema}.${file.slice(0, -".sql".length)}`);
  });
}

function tablesOf(schema: string): string[] {
  return readdirSync(join(ROOT, "sql", schema, "tables"))
    .filter((file) => file.endsWith(".sql"))
    .map((file) => `${schema}.${file.slice(0, -".sql".length)}`);
}

describe("docs/retention.md", () => {
  const retention = readFileSync(join(ROOT, "docs/retention.md"), "utf8");
  const tables = [...new Set([...tablesReferencingUsers(), ...tablesOf("app_private")])];

  it("finds the tables that hold a user's data, and every table of app_private", () => {
    expect(tables).toEqual(expect.arrayContaining(["public.tasks", "app_private.devices", "app_private.release_feedback", "app_private.tester_group_members", "app_private.release_webhook_deliveries", "app_private.sync_horizon"]));
  });

  it.each(tables)("names %s", (qualified) => {
    const name = qualified.split(".")[1];
    const named = retention.includes(`\`${name}\``) || retention.includes(`\`${qualified}\``);
    expect(named, `${qualified} holds data but is not named in docs/retention.md`).toBe(true);
  });
});
