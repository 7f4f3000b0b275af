// A synced table changed after the function was generated (a column renamed or dropped, the
// table renamed or dropped) and not yet deployed again: SQL naming its columns no longer
// compiles (42703 undefined_column, 42P01 undefined_table). The pull's and the push's
// statements name every collection in one text, so such a table would fail every pull and push.
// Instead, when one of them fails so, the catalog says which collections are out of step; they
// are left out of those texts from then on, a request that needs one answers 503 UNAVAILABLE
// (logged with the missing column), and the others work. A request that needs one checks the
// catalog again first: a change undone (the column renamed back) heals without a deploy.
// docs/sync.md, "Changing a synced table".
import { allCollections, type CollectionDefinition } from "../../_shared/collections.ts";
import { ApiError } from "../../_shared/errors.ts";
import type { Db } from "../lib/db.ts";

const COLLECTIONS = allCollections();
const DRIFT_SQLSTATES = new Set(["42703", "42P01"]);

/** Collection name → what of its table the database lacks; empty while every table matches. */
let outOfStep = new Map<string, string>();
/** The names in outOfStep, sorted and joined: which variant of the statements to use. */
let outOfStepKey = "";

/** The columns the generated SQL names of a collection's table. */
export function generatedColumns(collection: { fields: readonly { name: string }[] }): string[] {
  return ["id", ...collection.fields.map((f) => f.name)];
}

// Per collection: its table and the columns the generated SQL names.
const EXPECTED = JSON.stringify(COLLECTIONS.map((c) => ({ name: c.name, tbl: c.table, cols: generatedColumns(c) })));
const CATALOG_SQL = `
  select d.name,
         case when to_regclass(d.tbl) is null then 'table ' || d.tbl || ' does not exist'
              else (select 'column ' || string_agg(col, ', ') || ' of ' || d.tbl || ' does not exist'
                      from jsonb_array_elements_text(d.cols) col
                     where not exists (select 1 from pg_catalog.pg_attribute a
                                        where a.attrelid = to_regclass(d.tbl) and a.attname = col
                                          and a.attnum > 0 and not a.attisdropped))
         end as missing
    from jsonb_to_recordset($1::text::jsonb) as d(name text, tbl text, cols jsonb)`;

async function checkCatalog(db: Db): Promise<void> {
  const rows = await db.query((sql) => sql.unsafe<{ name: string; missing: string | null }[]>(CATALOG_SQL, [EXPECTED]));
  outOfStep = new Map(rows.filter((r) => r.missing !== null).map((r) => [r.name, r.missing!]));
  outOfStepKey = [...outOfStep.keys()].sort().join();
}

function refuseOutOfStep(needs: readonly string[]): void {
  const missing = needs.filter((name) => outOfStep.has(name));
  if (missing.length === 0) return;
  throw new ApiError(
    "UNAVAILABLE",
    `the table of collection ${missing.join(", ")} no longer matches this server (a schema change it was not yet deployed with); retry later`,
    { headers: { "Retry-After": "60" }, cause: new Error(missing.map((name) => `collection ${name}: ${outOfStep.get(name)}`).join("; ")) },
  );
}

/**
 * Runs `work` (a request's transaction) that reads or writes the collections it `needs`: 503 when
 * one of them is out of step with the database; when `work` fails on a table out of step, runs it
 * once more, if it needs none of those, with the statements that leave them out.
 */
export async function inStep<T>(db: Db, needs: readonly string[], work: () => Promise<T>): Promise<T> {
  if (needs.some((name) => outOfStep.has(name))) await checkCatalog(db);
  refuseOutOfStep(needs);
  const tried = outOfStepKey;
  try {
    return await work();
  } catch (error) {
    if (!DRIFT_SQLSTATES.has((error as { code?: unknown })?.code as string)) throw error;
    await checkCatalog(db);
    refuseOutOfStep(needs);
    if (outOfStepKey === tried) throw error; // not a table the catalog finds changed: a fault as any other
    return await work();
  }
}

/**
 * `build` of the collections in step, built once per set of collections out of step: a few
 * variants at most over a process's life (one per schema change awaiting a deploy), so the
 * statements' texts, prepared per connection, stay as few.
 */
export function perCollectionsInStep<T>(build: (collections: readonly CollectionDefinition[]) => T): () => T {
  const built = new Map<string, T>();
  return () => {
    let value = built.get(outOfStepKey);
    if (value === undefined) {
      value = build(COLLECTIONS.filter((c) => !outOfStep.has(c.name)));
      built.set(outOfStepKey, value);
    }
    return value;
  };
}
