// A synced row's `data` as Postgres builds it for the wire, one expression for
// the pull and the push's read-back, so both print a row identically.
// json_build_object with the columns named skips the jsonb round trip of
// `to_jsonb(t) - 'id'` (a third of a pull page's cost); it takes at most 100
// arguments, so a wider table falls back to to_jsonb.
import type { CollectionDefinition } from "../../_shared/collections.ts";

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** SQL (type json) of the row `alias` of the collection's table: its columns except id. */
export function rowJsonSql(collection: Pick<CollectionDefinition, "fields">, alias: string): string {
  return collection.fields.length <= 50
    ? `json_build_object(${collection.fields.map((f) => `${quoteLiteral(f.name)}, ${alias}.${quoteIdent(f.name)}`).join(", ")})`
    : `(to_jsonb(${alias}) - 'id')::json`;
}
