// The Insert and Update types of supabase/types/database.ts, cut to what the
// `authenticated` role may write. `supabase gen types` ignores column
// privileges: it offered `tasks.Insert.created_by`, which the database refuses
// (42501 permission denied, `read_only` in a push), so supabase-js code setting
// it compiled and failed at run time. The database's grants are the one source:
// has_column_privilege is true for a table-level and a column-level grant alike.
import type postgres from "postgres";
import ts from "typescript";

/** The columns of one relation `authenticated` may insert and update. */
export interface WritableColumns {
  insert: string[];
  update: string[];
}

/** Every table and view of `schema`, by name, with the columns `authenticated` may insert and update. */
export async function readWritableColumns(sql: postgres.Sql, schema: string): Promise<Map<string, WritableColumns>> {
  const rows = await sql<{ relation: string; insert: string[]; update: string[] }[]>`
    select c.relname::text as relation,
           coalesce(array_agg(a.attname::text order by a.attname) filter (where has_column_privilege('authenticated', c.oid, a.attnum, 'INSERT')), '{}') as insert,
           coalesce(array_agg(a.attname::text order by a.attname) filter (where has_column_privilege('authenticated', c.oid, a.attnum, 'UPDATE')), '{}') as update
      from pg_catalog.pg_class c
      join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
     where c.relnamespace = ${schema}::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
     group by c.relname`;
  return new Map(rows.map((r) => [r.relation, { insert: r.insert, update: r.update }]));
}

function memberName(member: ts.TypeElement): string | undefined {
  const name = member.name;
  return name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : undefined;
}

/** The type literal of property `name` in `literal`, or undefined. */
function member(literal: ts.TypeLiteralNode, name: string): ts.TypeNode | undefined {
  const found = literal.members.find((m) => memberName(m) === name);
  return found && ts.isPropertySignature(found) ? found.type : undefined;
}

function literals(node: ts.TypeNode | undefined): ts.TypeLiteralNode | undefined {
  return node && ts.isTypeLiteralNode(node) ? node : undefined;
}

/**
 * `source` (supabase gen types output) with the Insert and Update of every
 * relation of `schema` holding only the columns `writable` names for it (each
 * kept as generated: its type, whether optional). Where `authenticated` may
 * write no column, the type is `never`, not `{}`: supabase-js types the values of
 * `.insert()` / `.update()` of a relation without Insert / Update (a view that
 * cannot be written) as `never`, so no call compiles; `{}` would let
 * `.insert({})` compile, which the database refuses as well. Row stays whole.
 * A relation or column the two sides disagree on is an error, so that no
 * write is left open by a mismatch.
 */
export function restrictWrites(source: string, schema: string, writable: Map<string, WritableColumns>): string {
  const file = ts.createSourceFile("database.ts", source, ts.ScriptTarget.Latest, true);
  const database = file.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === "Database");
  const schemaType = literals(database && literals(database.type) && member(literals(database.type)!, schema));
  if (!schemaType) throw new Error(`supabase gen types printed no schema ${schema}`);

  const edits: { start: number; end: number; text: string }[] = [];
  for (const group of ["Tables", "Views"]) {
    for (const relation of literals(member(schemaType, group))?.members ?? []) {
      const name = memberName(relation);
      const relationType = ts.isPropertySignature(relation) ? literals(relation.type) : undefined;
      if (name === undefined || !relationType) continue; // `[_ in never]: never`
      for (const [kind, key] of [["Insert", "insert"], ["Update", "update"]] as const) {
        const columns = literals(member(relationType, kind));
        if (!columns) continue; // a view that cannot be written has none
        const allowed = writable.get(name)?.[key];
        if (!allowed) throw new Error(`no privileges read for ${schema}.${name}`);
        const names = new Set(columns.members.map(memberName));
        const unknown = allowed.filter((column) => !names.has(column));
        if (unknown.length > 0) throw new Error(`${kind} of ${schema}.${name} lacks ${unknown.map((c) => `${schema}.${name}.${c}`).join(", ")}`);
        if (allowed.length === 0) {
          edits.push({ start: columns.getStart(file), end: columns.getEnd(), text: "never" });
          continue;
        }
        for (const column of columns.members) {
          if (!allowed.includes(memberName(column)!)) edits.push({ start: column.getFullStart(), end: column.getEnd(), text: "" });
        }
      }
    }
  }
  let out = source;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}
