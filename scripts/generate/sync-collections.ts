// functions/_shared/sync-collections.generated.ts: every synced table as the
// database declares it (app_private.sync_tables, the columns, their types,
// nullability, defaults, a domain's base type, what `authenticated` may insert
// and update, and the simple length and pattern checks), so that push
// validation, GET /v1/meta and the client come from the table itself. The
// database's constraints stay the last word: a violation it reports is mapped
// back to a column by `constraints` (constraint or unique index name → columns).
import type postgres from "postgres";
import { COLUMN_ENUM_LABELS_SQL, COLUMN_VALUE_TYPE_SQL } from "../../functions/_shared/column-values-sql.ts";
import { portablePattern } from "../../functions/_shared/portable-pattern.ts";
import type { GeneratedCollection, GeneratedField } from "../../functions/_shared/sync-collection-types.ts";
import {
  insertOnlyColumnWarnings,
  refuseAll,
  refuseDefaultsAuthenticatedCannotRun,
  refuseMissingDeleteGrants,
  refuseMissingIdGrants,
  refuseScopeColumnsWithoutScopeTable,
  refuseScopeKeysWithoutCascade,
  refuseTablesWithoutRowSecurity,
  refuseTooManyCollections,
  refuseUncreatableColumns,
  refuseUnreadableTables,
  refuseUnrecheckedListWrites,
  refuseWritableOwnerColumns,
} from "./sync-collection-checks.ts";
import { readMembershipColumns, readOwnerColumns } from "./sync-collection-owners.ts";

/** One column as the catalog query returns it: the field's own facts plus its table's. */
interface ColumnRow extends Pick<GeneratedField, "name" | "type" | "category" | "nullable" | "has_default" | "insertable" | "updatable"> {
  collection: string;
  table_name: string;
  scope_column: string;
  scope_collection: string | null;
  /** A domain column's (or a domain array's) base type, through domains over domains; null for any other. */
  base_type: string | null;
  /** The labels of the column's enum (through a domain, of an array's element), or null. */
  enum_values: string[] | null;
  /** The table has a BEFORE INSERT row trigger (which may fill a column a create leaves out). */
  insert_trigger: boolean;
}

interface ConstraintRow {
  collection: string;
  name: string;
  columns: string[];
  definition: string;
}

// One term of a CHECK as pg_get_constraintdef prints it: a bound on a column's length, or a pattern.
const LENGTH_TERM = /^char_length\((\w+)\) (>=|<=|>|<|=) (\d+)$/;
const PATTERN_TERM = /^(\w+) ~ '((?:[^']|'')*)'::text$/;

/** `expression` without the parentheses around all of it. */
function unwrap(expression: string): string {
  while (expression.startsWith("(") && closingParen(expression, 0) === expression.length - 1) expression = expression.slice(1, -1);
  return expression;
}

/**
 * The index of the quote closing the literal or quoted identifier that opens at `i` (a doubled
 * quote inside reads as two of them, which skips the same text), or `i` when none opens there.
 */
function quotedEnd(expression: string, i: number): number {
  const quote = expression[i];
  if (quote !== "'" && quote !== '"') return i;
  const end = expression.indexOf(quote, i + 1);
  return end === -1 ? expression.length : end;
}

/** The index of the `)` closing the `(` at `open`, or -1. */
function closingParen(expression: string, open: number): number {
  let depth = 0;
  for (let i = open; i < expression.length; i = quotedEnd(expression, i) + 1) {
    const c = expression[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return -1;
}

/** A CHECK's expression (pg_get_constraintdef), or undefined for any other definition (NOT VALID and the like: left alone). */
function checkExpression(definition: string): string | undefined {
  const match = /^CHECK (\(.*\))$/s.exec(definition);
  return match && closingParen(match[1], 0) === match[1].length - 1 ? match[1] : undefined;
}

/** The terms of an expression's top-level AND, nested ANDs ((a AND b) AND c) flattened; the expression itself when it is no AND. */
function conjuncts(expression: string): string[] {
  expression = unwrap(expression);
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < expression.length; i = quotedEnd(expression, i) + 1) {
    const c = expression[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0 && expression.startsWith(" AND ", i)) {
      terms.push(expression.slice(start, i));
      start = i + 5;
    }
  }
  if (terms.length === 0) return [expression];
  terms.push(expression.slice(start));
  return terms.flatMap(conjuncts);
}

/**
 * The bounds a CHECK puts on its columns, read only from the terms of its top-level AND: each of
 * them must hold for the check to pass (false AND anything is false), so the push may refuse what
 * one refuses. A bound inside an OR, a NOT or any other expression (char_length(note) <= 10 OR
 * is_long) holds only with the rest of the row, so the database alone checks it.
 */
function applyCheck(fields: Map<string, GeneratedField>, definition: string): void {
  const expression = checkExpression(definition);
  for (const term of expression === undefined ? [] : conjuncts(expression)) {
    const length = LENGTH_TERM.exec(term);
    const lengthField = length && fields.get(length[1]);
    if (length && lengthField) {
      const [, , op, digits] = length;
      const bound = Number(digits);
      // Several bounds on one column: the tightest, as all of them must hold.
      if (op !== "<=" && op !== "<") lengthField.min_length = Math.max(lengthField.min_length ?? 0, op === ">" ? bound + 1 : bound);
      if (op !== ">=" && op !== ">") lengthField.max_length = Math.min(lengthField.max_length ?? Infinity, op === "<" ? bound - 1 : bound);
    }
    const pattern = PATTERN_TERM.exec(term);
    const patternField = pattern && fields.get(pattern[1]);
    // Published only when a JavaScript RegExp tests the same (portable-pattern.ts); else the database checks it alone.
    if (pattern && patternField && patternField.pattern === undefined) {
      const source = pattern[2].replaceAll("''", "'");
      if (portablePattern(source)) patternField.pattern = source;
    }
  }
}

/**
 * The synced tables as the generated file holds them; throws SyncTableRefusal for what generate refuses.
 * `warn` takes generate's warnings (npm start, which reads with this too, leaves them to generate).
 */
export async function readSyncCollections(
  sql: postgres.Sql,
  warn: (warning: string) => void = (warning) => console.warn(`generate: warning: ${warning}`),
): Promise<GeneratedCollection[]> {
  const owners = await readOwnerColumns(sql);
  await refuseAll([
    () => refuseTablesWithoutRowSecurity(sql),
    () => refuseUnreadableTables(sql),
    () => refuseScopeColumnsWithoutScopeTable(sql),
    () => refuseScopeKeysWithoutCascade(sql),
    () => refuseDefaultsAuthenticatedCannotRun(sql),
    () => refuseWritableOwnerColumns(sql, owners),
    () => refuseMissingIdGrants(sql),
    () => refuseMissingDeleteGrants(sql),
  ]);
  for (const warning of await insertOnlyColumnWarnings(sql)) warn(warning);
  const columns = await sql<ColumnRow[]>`
    select t.collection,
           (select format('%I.%I', n.nspname, c.relname) from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace where c.oid = t.relation) as table_name, t.scope_column::text as scope_column,
           case when t.scope_column = 'id' then t.collection else (
             select s.collection from pg_catalog.pg_constraint f
               join app_private.sync_tables s on s.relation = f.confrelid
              where f.conrelid = t.relation and f.contype = 'f'
                and f.conkey = array[(select x.attnum from pg_catalog.pg_attribute x where x.attrelid = t.relation and x.attname = t.scope_column)]
              limit 1) end as scope_collection,
           base.type as base_type, en.labels as enum_values, val_type.typcategory::text as category,
           a.attname::text as name, format_type(a.atttypid, a.atttypmod) as type, not (a.attnotnull or dom.not_null) as nullable,
           a.atthasdef or a.attidentity <> '' or dom.has_default as has_default,
           -- A generated or identity-always column takes no value, whatever it is granted.
           has_column_privilege('authenticated', t.relation, a.attname, 'INSERT') and a.attgenerated = '' and a.attidentity <> 'a' as insertable,
           has_column_privilege('authenticated', t.relation, a.attname, 'UPDATE') and a.attgenerated = '' and a.attidentity <> 'a' as updatable,
           -- (tidesync's own triggers, functions in app_private, fill no column)
           exists (select 1 from pg_catalog.pg_trigger tg
                    join pg_catalog.pg_proc fn on fn.oid = tg.tgfoid
                    where tg.tgrelid = t.relation and not tg.tgisinternal and tg.tgenabled <> 'D'
                      and fn.pronamespace <> 'app_private'::regnamespace
                      and tg.tgtype & 7 = 7) as insert_trigger -- TRIGGER_TYPE_ROW | BEFORE | INSERT
      from app_private.sync_tables t
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
      -- A domain column (a domain over a domain followed to the end): the domain's NOT NULL
      -- refuses null as the column's own does, and the domain's default fills an insert that
      -- leaves the column out.
     cross join lateral (
       with recursive d(type_id) as (
         select a.atttypid
         union all
         select ty.typbasetype from d join pg_catalog.pg_type ty on ty.oid = d.type_id and ty.typtype = 'd')
       select coalesce(bool_or(ty.typnotnull), false) as not_null, coalesce(bool_or(ty.typdefaultbin is not null), false) as has_default
         from d join pg_catalog.pg_type ty on ty.oid = d.type_id and ty.typtype = 'd') dom
      -- A domain column (or an array of a domain): the type its values are checked as, with the
      -- last domain's modifier (a domain over varchar(10) is character varying(10)).
      left join lateral (
       with recursive d(type_id, type_mod, depth, is_array) as (
         select coalesce(el.oid, a.atttypid), case when el.oid is null then a.atttypmod else -1 end, 0, el.oid is not null
           from pg_catalog.pg_type ty
           left join pg_catalog.pg_type el on el.oid = ty.typelem and ty.typcategory = 'A' and el.typtype = 'd'
          where ty.oid = a.atttypid
         union all
         select ty.typbasetype, ty.typtypmod, d.depth + 1, d.is_array from d join pg_catalog.pg_type ty on ty.oid = d.type_id and ty.typtype = 'd')
       select format_type(d.type_id, d.type_mod) || case when d.is_array then '[]' else '' end as type
         from d where d.depth > 0 order by d.depth desc limit 1) base on true
      -- The type of the column's values (column-values-sql.ts).
     ${sql.unsafe(COLUMN_VALUE_TYPE_SQL)}
      -- Its category (S a string type, U a user-defined one, C a composite, …): how the push checks
      -- a value of a type it has no schema of its own for (citext, ltree, inet, …).
      join pg_catalog.pg_type val_type on val_type.oid = val.type_id
      -- An enum's labels, in order (GET /v1/meta publishes them, the push accepts only them).
     ${sql.unsafe(COLUMN_ENUM_LABELS_SQL)}
     where a.attname <> 'id'
     order by t.collection, a.attnum`;
  // The table's constraints, its unique indexes that back none, then its domains' (a domain's CHECK
  // refuses a value of every column of that domain, or of a domain over it; its definition is not
  // the table's own check).
  const constraints = await sql<ConstraintRow[]>`
    select x.collection, x.name, x.columns, x.definition from (
      select t.collection, k.conname::text as name,
             array(select a.attname::text from unnest(k.conkey) n join pg_catalog.pg_attribute a on a.attrelid = k.conrelid and a.attnum = n order by a.attname) as columns,
             pg_get_constraintdef(k.oid) as definition, 0 as domain
        from app_private.sync_tables t
        join pg_catalog.pg_constraint k on k.conrelid = t.relation
      union all
      -- A unique index (case-insensitive, partial: rules a UNIQUE constraint cannot state): its 23505
      -- names the index. Its columns are those of its key, an expression's as it reads them (the
      -- Vars of indexprs; not an INCLUDE column, which makes nothing unique), and only when these
      -- are none (an index on a constant) its predicate's.
      select t.collection, c.relname::text,
             array(select a.attname::text from pg_catalog.pg_attribute a
                    where a.attrelid = t.relation and a.attnum = any (case when cardinality(key.attnums) > 0 then key.attnums else pred.attnums end)
                    order by a.attname),
             '', 0
        from app_private.sync_tables t
        join pg_catalog.pg_index i on i.indrelid = t.relation and i.indisunique
        join pg_catalog.pg_class c on c.oid = i.indexrelid
       cross join lateral (
         select array(select n from unnest((i.indkey::int2[])[0:i.indnkeyatts - 1]) n where n > 0
                      union select m[1]::int2 from regexp_matches(i.indexprs::text, ':varattno ([0-9]+)', 'g') m) as attnums) key
       cross join lateral (
         select array(select m[1]::int2 from regexp_matches(i.indpred::text, ':varattno ([0-9]+)', 'g') m) as attnums) pred
       -- (A constraint's own index is that constraint's row above; a foreign key's row names the index it references.)
       where not exists (select 1 from pg_catalog.pg_constraint k
                          where k.conrelid = t.relation and k.conindid = i.indexrelid and k.contype in ('p', 'u'))
      union all
      select t.collection, k.conname::text, array_agg(distinct a.attname order by a.attname)::text[], '', 1
        from app_private.sync_tables t
        join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum > 0 and not a.attisdropped
       cross join lateral (
         with recursive d(type_id) as (
           select a.atttypid
           union all
           select ty.typbasetype from d join pg_catalog.pg_type ty on ty.oid = d.type_id and ty.typtype = 'd')
         select d.type_id from d) d
        join pg_catalog.pg_constraint k on k.contypid = d.type_id
       group by t.collection, k.conname) x
     order by x.collection, x.name collate "C", x.domain`;
  // The synced tables each one's foreign keys reference (a push writes rows after those they
  // refer to, and deletes them before: plan-batch.ts writeGroups).
  const references = await sql<{ collection: string; referenced: string[] }[]>`
    select t.collection, array_agg(distinct s.collection order by s.collection) as referenced
      from app_private.sync_tables t
      join pg_catalog.pg_constraint f on f.conrelid = t.relation and f.contype = 'f'
      join app_private.sync_tables s on s.relation = f.confrelid
     group by t.collection`;
  const referenced = new Map(references.map((r) => [r.collection, r.referenced]));
  // Each single-column foreign key to another synced table's id, but the scope column's.
  const foreignKeys = await sql<{ collection: string; column: string; referenced: string }[]>`
    select t.collection, a.attname::text as column, s.collection as referenced
      from app_private.sync_tables t
      join pg_catalog.pg_constraint f on f.conrelid = t.relation and f.contype = 'f' and cardinality(f.conkey) = 1
      join app_private.sync_tables s on s.relation = f.confrelid
      join pg_catalog.pg_attribute a on a.attrelid = t.relation and a.attnum = f.conkey[1]
      join pg_catalog.pg_attribute k on k.attrelid = f.confrelid and k.attnum = f.confkey[1] and k.attname = 'id'
     where a.attname <> t.scope_column
     order by t.collection, a.attname collate "C"`;
  const collections = new Map<string, GeneratedCollection>();
  const fieldMaps = new Map<string, Map<string, GeneratedField>>();
  for (const row of columns) {
    let collection = collections.get(row.collection);
    if (!collection) {
      collection = {
        name: row.collection,
        table: row.table_name,
        scope_column: row.scope_column,
        // (refuseScopeColumnsWithoutScopeTable refused a table without one)
        scope_collection: row.scope_collection!,
        fields: [],
        constraints: {},
        references: referenced.get(row.collection) ?? [],
        foreign_keys: Object.fromEntries(foreignKeys.filter((k) => k.collection === row.collection).map((k) => [k.column, k.referenced])),
        owner_column: null,
        membership_user_column: null,
      };
      collections.set(row.collection, collection);
      fieldMaps.set(row.collection, new Map());
    }
    const field: GeneratedField = {
      name: row.name,
      type: row.type,
      category: row.category,
      nullable: row.nullable,
      has_default: row.has_default,
      insertable: row.insertable,
      updatable: row.updatable,
    };
    // A NOT NULL column without a default that a BEFORE INSERT row trigger of the table may fill:
    // a create may leave it out, and the database says if it stays null (23502: `required` on it).
    // Not the scope column: the push decides who sees a row before it writes it.
    if (row.insert_trigger && !row.nullable && !row.has_default && row.name !== row.scope_column) field.filled_by_trigger = true;
    if (row.base_type) field.base_type = row.base_type;
    if (row.enum_values) field.enum_values = row.enum_values;
    collection.fields.push(field);
    fieldMaps.get(row.collection)!.set(row.name, field);
  }
  for (const row of constraints) {
    const collection = collections.get(row.collection);
    if (!collection) continue;
    const known = collection.constraints[row.name]; // a domain's constraint named as one of the table's
    collection.constraints[row.name] = known ? [...new Set([...known, ...row.columns])].sort() : row.columns;
    if (row.definition.startsWith("CHECK")) applyCheck(fieldMaps.get(row.collection)!, row.definition);
  }
  const members = await readMembershipColumns(sql);
  for (const collection of collections.values()) {
    collection.membership_user_column = members.get(collection.name) ?? null;
    collection.owner_column = owners.get(collection.name) ?? collection.membership_user_column;
  }
  refuseUncreatableColumns([...collections.values()]);
  refuseTooManyCollections([...collections.keys()]);
  return [...collections.values()];
}

/**
 * The synced tables as `npm run generate` takes them, after every check it makes (a list-scoped
 * table's recheck triggers, then readSyncCollections' own), all refusals in one: what generate
 * writes and what `npm start`'s drift warning compares, so that both refuse the same tables with
 * the same words.
 */
export async function readCheckedSyncCollections(
  sql: postgres.Sql,
  warn?: (warning: string) => void,
): Promise<GeneratedCollection[]> {
  let collections: GeneratedCollection[] = [];
  await refuseAll([
    () => refuseUnrecheckedListWrites(sql),
    async () => {
      collections = await readSyncCollections(sql, warn);
    },
  ]);
  return collections;
}

export function syncCollectionsSource(collections: GeneratedCollection[]): string {
  return [
    "// GENERATED by `npm run generate` from the database (app_private.sync_tables and the tables' catalog). Do not edit:",
    "// make a table syncable with app_private.enable_sync() in a migration, then run `npm run generate`.",
    'import type { GeneratedCollection } from "./sync-collection-types.ts";',
    "",
    `export const SYNC_COLLECTIONS: readonly GeneratedCollection[] = ${JSON.stringify(collections, null, 2)};`,
    "",
  ].join("\n");
}
