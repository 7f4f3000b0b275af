// What `npm run generate` reads of a synced table (scripts/generate/sync-collections.ts),
// for column kinds the sample app does not have: the push validates with it and
// GET /v1/meta publishes it, so a user would notice a column published as
// nullable that the database refuses null for, or a create refused as missing a
// column the database fills. Each table is made in a transaction rolled back
// afterwards, and read as the generator reads the database.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import type { GeneratedCollection, GeneratedField } from "../../functions/_shared/sync-collection-types.ts";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql } from "../support/harness.ts";

/** The collection `name` as the generator reads it, after `setup` ran (all of it rolled back). */
async function generatedAfter(name: string, setup: string[]): Promise<GeneratedCollection> {
  const rollback = new Error("rolled back on purpose");
  let found: GeneratedCollection | undefined;
  await adminSql.begin(async (tx) => {
    for (const statement of setup) await tx.unsafe(statement);
    await tx.unsafe(`alter table public.${name} enable row level security`);
    await tx.unsafe(`select app_private.enable_sync('public.${name}', 'list_id')`);
    found = (await readSyncCollections(tx as unknown as postgres.Sql)).find((c) => c.name === name);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  if (!found) throw new Error(`${name} is not synced`);
  return found;
}

const field = (collection: GeneratedCollection, name: string): GeneratedField => {
  const found = collection.fields.find((f) => f.name === name);
  if (!found) throw new Error(`no field ${name}`);
  return found;
};

describe("sync collections as the generator reads them", () => {
  it("a domain's NOT NULL makes its column not nullable, and a domain's default is a default", async () => {
    const probe = await generatedAfter("catalog_domains", [
      `create domain public.catalog_nonblank as text not null check (value <> '')`,
      `create domain public.catalog_code as public.catalog_nonblank default 'c'`,
      `create domain public.catalog_maybe as text check (value <> '')`,
      `create table public.catalog_domains (id uuid primary key, list_id uuid not null references public.lists (id),
         label public.catalog_nonblank default 'unnamed', name public.catalog_nonblank, code public.catalog_code,
         hint public.catalog_maybe, plain text)`,
    ]);
    expect(field(probe, "label")).toMatchObject({ nullable: false, has_default: true });
    expect(field(probe, "name")).toMatchObject({ nullable: false, has_default: false });
    expect(field(probe, "code"), "a domain over a NOT NULL domain, with its own default").toMatchObject({ nullable: false, has_default: true });
    expect(field(probe, "hint")).toMatchObject({ nullable: true, has_default: false });
    expect(field(probe, "plain")).toMatchObject({ nullable: true, has_default: false });
  });
});
