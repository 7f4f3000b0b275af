// How a synced column's values are typed, read from the catalog the same way by `npm run generate`
// (scripts/generate/sync-collections.ts: a field's category and enum labels) and by the pull's
// check of the columns the database has now (functions/api/sync/pull-store.ts databaseShapes), so
// that the two describe a column alike. `a` is the column's pg_attribute row.

/**
 * `cross join lateral … val(type_id)`: the type of the column's values: through domains, and for an
 * array column its element type's (an array of a domain over an enum: the enum).
 */
export const COLUMN_VALUE_TYPE_SQL = `cross join lateral (
       with recursive d(type_id, depth) as (
         select a.atttypid, 0
         union all
         select case when ty.typtype = 'd' then ty.typbasetype else ty.typelem end, d.depth + 1
           from d join pg_catalog.pg_type ty on ty.oid = d.type_id
          where ty.typtype = 'd' or (ty.typcategory = 'A' and ty.typelem <> 0))
       select d.type_id from d order by d.depth desc limit 1) val`;

/** `cross join lateral … en(labels)`: the labels of `val`'s enum, in order (null: not an enum). */
export const COLUMN_ENUM_LABELS_SQL = `cross join lateral (
       select array_agg(e.enumlabel::text order by e.enumsortorder) as labels
         from pg_catalog.pg_enum e where e.enumtypid = val.type_id) en`;
