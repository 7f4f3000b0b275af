// `npm start` (local development): the synced tables the database declares
// (app_private.sync_tables, app_private.sync_memberships, their columns) against
// those the function was generated with (functions/_shared/sync-collections.generated.ts).
// A migration applied without `npm run generate` otherwise goes unsaid: a table
// synced since is left out of GET /v1/meta and its pushes are unknown_collection;
// a column dropped since makes the function answer 503 for its table
// (functions/api/sync/schema-drift.ts, whose list of the generated columns this
// compares with).
import postgres from "postgres";
import type { GeneratedCollection } from "../../functions/_shared/sync-collection-types.ts";
import { generatedColumns } from "../../functions/api/sync/schema-drift.ts";

/** A synced table as the database declares it. */
export interface DatabaseCollection {
  collection: string;
  /** Qualified as the generator writes it (format('%I.%I')). */
  table: string;
  /** A membership table's member column, else null. */
  member_column: string | null;
  columns: string[];
}

export async function readDatabaseCollections(sql: postgres.Sql): Promise<DatabaseCollection[]> {
  return await sql<DatabaseCollection[]>`
    select t.collection, format('%I.%I', n.nspname, c.relname) as "table", m.user_column::text as member_column,
           array(select a.attname::text from pg_catalog.pg_attribute a
                  where a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped order by a.attnum) as columns
      from app_private.sync_tables t
      join pg_catalog.pg_class c on c.oid = t.relation
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      left join app_private.sync_memberships m on m.relation = t.relation`;
}

type Generated = Pick<GeneratedCollection, "name" | "table" | "membership_user_column" | "fields">;

/** One line per difference, by collection name; empty when the database syncs what the function was generated with. */
export function generatedCollectionsDrift(generated: readonly Generated[], database: readonly DatabaseCollection[]): string[] {
  const theirs = new Map(database.map((d) => [d.collection, d]));
  const mine = new Map(generated.map((g) => [g.name, g]));
  const names = [...new Set([...mine.keys(), ...theirs.keys()])].sort();
  return names.flatMap((name) => {
    const g = mine.get(name);
    const d = theirs.get(name);
    const table = `${d?.table ?? g!.table} (collection ${name})`;
    if (!g) return [`${table} is synced by the database but not by the function: GET /v1/meta leaves it out and a push of it is refused unknown_collection`];
    if (!d) return [`${table} is no longer synced by the database but the function still syncs it`];
    if (g.table !== d.table) return [`${table} is ${g.table} in the function`];
    const lines: string[] = [];
    if (g.membership_user_column !== d.member_column) {
      lines.push(d.member_column === null
        ? `${table} is no longer a membership table in the database (the function's member column: ${g.membership_user_column})`
        : `${table} is a membership table in the database (member column ${d.member_column}), ${g.membership_user_column === null ? "not in the function" : `${g.membership_user_column} in the function`}`);
    }
    const expected = generatedColumns(g);
    const added = d.columns.filter((c) => !expected.includes(c));
    const dropped = expected.filter((c) => !d.columns.includes(c));
    if (added.length > 0) lines.push(`${table} has columns the function does not know: ${added.join(", ")} (a push that sends them is refused)`);
    if (dropped.length > 0) lines.push(`${table} lacks columns the function names: ${dropped.join(", ")} (its pulls and pushes answer 503 UNAVAILABLE)`);
    return lines;
  });
}

/** The drift of the database at `url` (what `npm start` warns of), or undefined when it cannot be read (a role that may not read app_private). */
export async function readGeneratedCollectionsDrift(url: string, generated: readonly Generated[]): Promise<string[] | undefined> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return generatedCollectionsDrift(generated, await readDatabaseCollections(sql));
  } catch {
    return undefined;
  } finally {
    await sql.end();
  }
}

/** What `npm start` prints for `drift`, or undefined when there is none. */
export function generatedCollectionsWarning(drift: readonly string[]): string | undefined {
  if (drift.length === 0) return undefined;
  return [
    "WARNING: the database's synced tables differ from functions/_shared/sync-collections.generated.ts",
    "(a migration applied without `npm run generate` after it):",
    ...drift.map((line) => `  - ${line}`),
    "Run `npm run generate`, then restart npm start.",
  ].join("\n");
}
