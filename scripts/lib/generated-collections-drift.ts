// `npm start` (local development): the synced tables as `npm run generate` reads
// them from the database (readSyncCollections: the tables, their columns' types,
// nullability, defaults, privileges, checks, enum labels, constraints) against
// those the function was generated with (functions/_shared/sync-collections.generated.ts).
// A migration applied without `npm run generate` otherwise goes unsaid: a table
// synced since is left out of GET /v1/meta and its pushes are unknown_collection;
// a column dropped since makes the function answer 503 for its table
// (functions/api/sync/schema-drift.ts); a check, a nullability or a privilege
// changed since leaves the push validating by the old shape (a value the new
// check refuses is accepted, then refused by the database). The comparison is
// everything the generator writes, read by the generator's own reader, and
// whatever generate would refuse (its refusal, in place of the differences).
import postgres from "postgres";
import type { GeneratedCollection, GeneratedField } from "../../functions/_shared/sync-collection-types.ts";
import { SyncTableRefusal } from "../generate/sync-collection-checks.ts";
import { readCheckedSyncCollections } from "../generate/sync-collections.ts";

/** A generated value as the warning shows it (absent: none). */
function shown(value: unknown): string {
  return value === undefined || value === null ? "none" : JSON.stringify(value);
}

/** `key before → after` for each of `keys` whose value differs. */
function changes<T extends object>(before: T, after: T, keys: readonly (keyof T)[]): string[] {
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .map((key) => `${String(key)} ${shown(before[key])} → ${shown(after[key])}`);
}

// Every fact of a field the generator writes, in the order the warning names them (one added to
// GeneratedField does not compile until it is listed here).
const FIELD_FACTS = Object.keys({
  type: 0, base_type: 0, category: 0, nullable: 0, has_default: 0, filled_by_trigger: 0, insertable: 0, updatable: 0,
  min_length: 0, max_length: 0, pattern: 0, enum_values: 0,
} satisfies Record<Exclude<keyof GeneratedField, "name">, 0>) as (keyof GeneratedField)[];

/**
 * What differs in a collection beyond its table, membership and set of columns: its scope and owner
 * column, each field's facts (type, nullability, default, privileges, checks, enum labels), the
 * columns' order and the constraints by which a refusal of the database is mapped back to a field.
 */
function shapeChanges(g: GeneratedCollection, d: GeneratedCollection): string[] {
  // An owner column that follows the membership column is said by the membership line.
  const ownerFollowsMember = g.owner_column === g.membership_user_column && d.owner_column === d.membership_user_column;
  const items = changes(g, d, ownerFollowsMember ? ["scope_column", "scope_collection"] : ["scope_column", "scope_collection", "owner_column"]);
  const theirs = new Map(d.fields.map((f) => [f.name, f]));
  for (const mine of g.fields) {
    const field = theirs.get(mine.name);
    const differs = field ? changes(mine, field, FIELD_FACTS) : [];
    if (differs.length > 0) items.push(`field ${mine.name} differs (${differs.join(", ")})`);
  }
  const common = (c: GeneratedCollection, other: GeneratedCollection) => c.fields.map((f) => f.name).filter((n) => other.fields.some((f) => f.name === n));
  if (common(g, d).join() !== common(d, g).join()) {
    items.push(`columns in another order (${common(d, g).join(", ")}; the function's: ${common(g, d).join(", ")})`);
  }
  for (const name of [...new Set([...Object.keys(g.constraints), ...Object.keys(d.constraints)])].sort()) {
    const [mine, theirs] = [g.constraints[name], d.constraints[name]];
    if (!mine) items.push(`constraint ${name} added`);
    else if (!theirs) items.push(`constraint ${name} dropped`);
    else if (mine.join() !== theirs.join()) items.push(`constraint ${name} now on ${theirs.join(", ")} (was ${mine.join(", ")})`);
  }
  return items;
}

/** One line per difference, by collection name; empty when the database syncs what the function was generated with. */
export function generatedCollectionsDrift(generated: readonly GeneratedCollection[], database: readonly GeneratedCollection[]): string[] {
  const theirs = new Map(database.map((d) => [d.name, d]));
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
    if (g.membership_user_column !== d.membership_user_column) {
      lines.push(d.membership_user_column === null
        ? `${table} is no longer a membership table in the database (the function's member column: ${g.membership_user_column})`
        : `${table} is a membership table in the database (member column ${d.membership_user_column}), ${g.membership_user_column === null ? "not in the function" : `${g.membership_user_column} in the function`}`);
    }
    const expected = g.fields.map((f) => f.name);
    const present = d.fields.map((f) => f.name);
    const added = present.filter((c) => !expected.includes(c));
    const dropped = expected.filter((c) => !present.includes(c));
    if (added.length > 0) lines.push(`${table} has columns the function does not know: ${added.join(", ")} (a push that sends them is refused)`);
    if (dropped.length > 0) lines.push(`${table} lacks columns the function names: ${dropped.join(", ")} (its pulls and pushes answer 503 UNAVAILABLE)`);
    const shape = shapeChanges(g, d);
    if (shape.length > 0) lines.push(`${table}: ${shape.join(", ")}`);
    return lines;
  });
}

/**
 * The entries for a database whose synced tables `npm run generate` refuses (`message`: its refusal,
 * a line per table, followed by the indented statements that fix it where it gives them).
 */
export function generateRefusalDrift(message: string): string[] {
  const entries: string[] = [];
  for (const line of message.split("\n")) {
    // A statement of the fix: under its table's entry, indented below the warning's bullet.
    if (/^\s/.test(line) && entries.length > 0) entries[entries.length - 1] += `\n    ${line}`;
    else entries.push(`${REFUSAL_ENTRY}${line}`);
  }
  return entries;
}

/** How an entry of generateRefusalDrift begins. */
const REFUSAL_ENTRY = "npm run generate would refuse the database's synced tables (what else differs is unknown until the migration is fixed): ";

/**
 * The drift of the database `sql` reads (what `npm start` warns of): what generate would refuse
 * in it, if anything; undefined when it cannot be read (a role that may not read app_private).
 */
export async function databaseCollectionsDrift(sql: postgres.Sql, generated: readonly GeneratedCollection[]): Promise<string[] | undefined> {
  let database: GeneratedCollection[];
  try {
    // Generate's own read and refusals: a list-scoped table whose writes are not rechecked (a
    // migration that dropped or disabled a step 3 trigger) changes no collection, yet a removed
    // member's waiting write then lands.
    database = await readCheckedSyncCollections(sql, () => {}); // its warnings are generate's to print
  } catch (error) {
    if (error instanceof SyncTableRefusal) return generateRefusalDrift(error.message);
    return undefined;
  }
  return generatedCollectionsDrift(generated, database);
}

/** The drift of the database at `url` (databaseCollectionsDrift). */
export async function readGeneratedCollectionsDrift(url: string, generated: readonly GeneratedCollection[]): Promise<string[] | undefined> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await databaseCollectionsDrift(sql, generated);
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
    // Generate reads the migrations: until one fixes what it refuses, it only refuses again.
    drift.some((line) => line.startsWith(REFUSAL_ENTRY))
      ? "Fix it in a new migration with the statements shown above (`npm run generate` refuses the migrations until then), " +
        "then run `npm run generate` and restart npm start (it applies the migration)."
      : "Run `npm run generate`, then restart npm start.",
  ].join("\n");
}
