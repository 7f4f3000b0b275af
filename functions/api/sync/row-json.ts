// A synced row's `data` as Postgres builds it for the wire, one expression for
// the pull and the push's read-back, so both print a row identically.
//
// The object is concatenated text, one piece per column by its type, not
// json_build_object: that function looks up every argument's type and output
// function again for every row (keys included), about twice the cost of this
// (docs/performance-history.md). uuids, booleans, integers and json are printed by
// their cast to text (valid JSON as they are; the cast is resolved once per
// statement), every other type by to_json(), which quotes and escapes it
// exactly as json_build_object did (text, numbers that may be NaN, dates and
// times in ISO 8601, arrays, enums, domains). Keys are the column names as
// JSON strings. tests/integration/row-json.test.ts holds it to row_to_json.
import type { CollectionDefinition } from "../../_shared/collections.ts";
import type { GeneratedField } from "../../_shared/sync-collection-types.ts";
import { wireTimeSql } from "./wire-time.ts";

/**
 * How many records' JSON a statement joins (by commas) into one result row:
 * the pull's pages and the push's read-back. Not one aggregated value for all
 * of them: a ~440 KB value is copied five or six times on its way out of the
 * backend (the aggregate's doubling buffer, the result tuple, the output
 * function, the protocol message), each time into freshly mapped memory,
 * about half of a pull page statement's CPU. Not one row each either: that
 * costs postgres.js and the garbage collector ~5 µs per row in the function.
 * (docs/performance-history.md)
 */
export const RECORDS_PER_ROW = 50;

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Types whose text form is already their JSON form. */
const PRINTED_AS_IS = new Set(["boolean", "smallint", "integer", "bigint", "json", "jsonb"]);

/** SQL (type text) of one column's JSON value, `null` when the column is null. */
function valueJsonSql(field: Pick<GeneratedField, "name" | "type">, alias: string): string {
  const column = `${alias}.${quoteIdent(field.name)}`;
  const printed = field.type === "uuid"
    ? `'"' || ${column}::text || '"'`
    : PRINTED_AS_IS.has(field.type)
    ? `${column}::text`
    : `to_json(${column})::text`;
  return `coalesce(${printed}, 'null')`;
}

/** SQL (type text) of the row `alias` of the collection's table as a JSON object: its columns except id. */
export function rowJsonSql(collection: Pick<CollectionDefinition, "fields">, alias: string): string {
  if (collection.fields.length === 0) return `'{}'`;
  const parts = collection.fields.map((field, i) =>
    `${quoteLiteral(`${i === 0 ? "{" : ","}${JSON.stringify(field.name)}:`)} || ${valueJsonSql(field, alias)}`
  );
  return `(${parts.join(" || ")} || '}')`;
}

/**
 * SQL (type text) of one record on the wire, {"collection","id","version",
 * "deleted","data","updated_at"} (and `reason` when given), from SQL
 * expressions: the collection (a name matching ^[a-z][a-z0-9_]*$) and the id
 * (a uuid) need no escaping; `data` is JSON text or 'null'.
 */
export function recordJsonSql(e: { collection: string; id: string; version: string; deleted: string; data: string; updatedAt: string; reason?: string }): string {
  return `'{"collection":"' || ${e.collection} || '","id":"' || ${e.id} || '","version":' || ${e.version} ||
    ',"deleted":' || ${e.deleted} || ',"data":' || ${e.data} || ',"updated_at":"' || ${wireTimeSql(e.updatedAt)} || '"'${e.reason ? ` || ${e.reason}` : ""} || '}'`;
}
