// The sync collections, as the database declares them: one per table made
// syncable with app_private.enable_sync() (sync-collections.generated.ts,
// written by `npm run generate`). From each table's columns this builds the
// zod schemas of what an upsert may carry — a row to create (insertable
// columns; required ones must be there) or a patch of an existing row
// (updatable columns) — and the field list GET /v1/meta publishes. The
// database's constraints stay the last word (functions/api/sync/db-refusal.ts).
import { z } from "zod";
import { fractionDigits } from "./inexact-numbers.ts";
import { jsonValueSchema } from "./json-value.ts";
import { portablePattern } from "./portable-pattern.ts";
import { bytesAtMost, storableText } from "./storable-text.ts";
import type { GeneratedCollection, GeneratedField } from "./sync-collection-types.ts";
import { SYNC_COLLECTIONS } from "./sync-collections.generated.ts";
import { uuidSchema } from "./uuid.ts";

export type { GeneratedCollection, GeneratedField };

type Patch = Record<string, unknown>;

export interface CollectionDefinition {
  name: string;
  table: string;
  scopeColumn: string;
  /** The collection the scope column references (its own name for a scope table). */
  scopeCollection: string;
  /** Its own rows are the scopes (e.g. lists). */
  isScope: boolean;
  fields: readonly GeneratedField[];
  /**
   * The fields no client may write (neither insertable nor updatable: created_by, created_at):
   * only the database changes them, so their change never makes a delete conflict (merge.ts).
   */
  serverFields: ReadonlySet<string>;
  /**
   * In a membership table (list_members), the column naming the member: its writes change who may
   * see a scope, so a push writes them last, and the caller's own last of all. Null elsewhere.
   */
  memberColumn: string | null;
  /** Users may insert some column: a table they may not insert into (list_members: members join through invites) is never created in by an op. */
  creatable: boolean;
  /** Validates the data of an upsert that creates the row. */
  create: z.ZodType<Patch>;
  /** Validates the data of an upsert that changes an existing row. */
  update: z.ZodType<Patch>;
  /** Constraint (or unique index) name → the columns it concerns. */
  constraints: Readonly<Record<string, string[]>>;
  /** The synced collections its foreign keys reference (GeneratedCollection.references). */
  references: ReadonlySet<string>;
  /** Column → the synced collection whose id it references, the scope column's aside (GeneratedCollection.foreign_keys). */
  foreignKeys: ReadonlyMap<string, string>;
  /** The fields whose numbers are stored as sent (storesExactNumbers). */
  exactNumberFields: ReadonlySet<string>;
  /** A column may print a number a double cannot hold (printsLongNumbers): its rows' JSON is parsed keeping them. */
  mayHoldInexactNumbers: boolean;
}

const INT_RANGE: Record<string, [number, number]> = {
  smallint: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** The length a string of a text-like column may have when no check bounds it (a record's data is smaller anyway). */
const ANY_TEXT_LENGTH = 1_000_000;

/** The bytes Postgres keeps of a `name` (NAMEDATALEN - 1). */
const MAX_NAME_BYTES = 63;

/** Postgres' bound on an array's dimensions (MAXDIM). */
const MAX_ARRAY_DIMENSIONS = 6;

/**
 * A type name without its modifiers, wherever format_type puts them: numeric(10,2) → numeric,
 * timestamp(3) with time zone → timestamp with time zone, character varying(40)[] → character varying[].
 */
function withoutModifiers(type: string): string {
  return type.replace(/\(\d+(?:,\s*-?\d+)?\)/g, "");
}

/**
 * A number of a numeric(p,s) column (or an array of them), which Postgres rounds to its scale
 * without a word (1e-21 stored as 0.00000000000000000000 in a numeric(40,20)): refused (`not_exact`)
 * when it has more digits after the point than the scale keeps. Judged on the double's shortest
 * text, the literal's own value: any other literal is refused `not_exact` before this is asked
 * (inexact-numbers.ts). A numeric without a scale keeps every digit.
 */
function numericSchema(field: GeneratedField): z.ZodType {
  const declared = /^numeric\(\d+,(-?\d+)\)/.exec(field.base_type ?? field.type);
  if (!declared) return z.number();
  const scale = Number(declared[1]);
  const kept = scale >= 0 ? `has more than ${scale} digits after the decimal point` : `is not a multiple of 1e${-scale}`;
  return z.number().refine((value) => fractionDigits(String(value)) <= scale, {
    message: `${kept}: a ${declared[0]} would store it rounded`,
    params: { code: "not_exact" },
  });
}

/**
 * An array column's value as to_json prints it: a JSON array of its elements (each may be null),
 * or, multidimensional, of such arrays. How many dimensions is read from the value's first items,
 * so that a wrong item is reported as itself ("/tags/1 must be string"), not as a mismatch of every
 * shape; that a multidimensional array is rectangular, the database checks (its refusal is the op's).
 */
function arraySchema(element: z.ZodType): z.ZodType {
  const byDimensions: z.ZodType[] = [z.array(element.nullable())];
  while (byDimensions.length < MAX_ARRAY_DIMENSIONS) byDimensions.push(z.array(byDimensions[byDimensions.length - 1]));
  return z.unknown().transform((value, ctx) => {
    let dimensions = 1;
    for (let item = value; Array.isArray(item) && Array.isArray(item[0]) && dimensions < MAX_ARRAY_DIMENSIONS; item = item[0]) dimensions++;
    const parsed = byDimensions[dimensions - 1].safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0] & object);
    return z.NEVER;
  });
}

// Dates and instants the wire carries both ways: years 0001-9999, in UTC for an instant.
// Postgres stores a wider range, but prints an instant past it as "10000-01-01T…" or
// "…BC", which no client parses back (9999-12-31T23:59:59-14:00 is in year 10000 UTC).
const OUT_OF_WIRE_RANGE = { message: "must fall within the years 0001-9999 (UTC)", params: { code: "out_of_range" } };
const FIRST_WIRE_MS = Date.parse("0001-01-01T00:00:00Z");
const LAST_WIRE_MS = Date.UTC(10000, 0, 1) - 1;

/**
 * Whether Postgres stores this ISO-8601 instant (offset and all) as one of the years 0001-9999 in
 * UTC. Asked only of a value whose second's fraction the column keeps whole (secondsKeptWhole): none
 * rounds into another second, so the millisecond Date.parse reads decides.
 */
function isWireInstant(value: string): boolean {
  const ms = Date.parse(value);
  return ms >= FIRST_WIRE_MS && ms <= LAST_WIRE_MS;
}

/**
 * A time-like column (timestamptz, timestamp, time, timetz, an array of them, a domain over one)
 * keeps its precision's digits of a second's fraction, 6 (microseconds) unless declared
 * (timestamp(3)), and Postgres rounds the rest without a word: 23:59:59.9999999 is stored as the
 * next day's midnight. A value with a non-zero digit past them is refused (`not_exact`), as a
 * number the column would store as another is; zeros past them are exact (.1234560). The one rule
 * for every time-like kind (valueSchema).
 */
function secondsKeptWhole(field: GeneratedField): [(value: string) => boolean, { message: string; params: { code: string }; abort: true }] {
  const type = field.base_type ?? field.type;
  const declared = /\((\d+)\)/.exec(type);
  const kept = declared ? Number(declared[1]) : 6;
  const message = declared
    ? `has more than ${kept} digits of a second: its column keeps ${kept} (${type.replace(/\[\]$/, "")}), and Postgres would store it rounded`
    : "has more than 6 digits of a second: Postgres keeps microseconds, and would store it rounded";
  return [
    (value) => !/[1-9]/.test((/\.(\d+)/.exec(value)?.[1] ?? "").slice(kept)),
    { message, params: { code: "not_exact" }, abort: true },
  ];
}

/** The type a field's values are checked as: a domain's base type, without modifiers. */
function valueType(field: GeneratedField): string {
  return withoutModifiers(field.base_type ?? field.type);
}

/** A time of day as Postgres reads and prints a `time` (24:00:00 is one). */
const TIME_OF_DAY = /^(?:(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?|24:00(?::00(?:\.0+)?)?)$/;

/** The JSON value a column accepts (null aside). */
export function fieldValueSchema(field: GeneratedField): z.ZodType {
  return valueSchema(valueType(field), field);
}

function valueSchema(type: string, field: GeneratedField): z.ZodType {
  // An array (text[], integer[], …): its elements as a column of the element type.
  if (type.endsWith("[]")) return arraySchema(valueSchema(type.slice(0, -2), field));
  // An enum (or an array's enum element, or a domain over one): one of its labels.
  if (field.enum_values) return z.enum(field.enum_values);
  if (type in INT_RANGE) {
    const [min, max] = INT_RANGE[type];
    // The range first, and nothing more once it fails: .int() has a bound of its own (±(2^53 - 1)),
    // and a value past both (9007199254740994 in a bigint) got two details for one fault.
    return z.number().min(min, { abort: true }).max(max, { abort: true }).int();
  }
  switch (type) {
    case "uuid":
      return uuidSchema;
    case "text":
    case "character varying": {
      let schema = storableText(field.max_length ?? ANY_TEXT_LENGTH, field.min_length ?? 0);
      // A pattern that would not mean the same here (or not compile: a server older than this
      // rule may publish one) is left to the database, never thrown at module load.
      const pattern = field.pattern === undefined ? undefined : portablePattern(field.pattern);
      if (pattern) {
        schema = schema.refine((value) => pattern.test(value), { message: `must match ${field.pattern}`, params: { code: "invalid_format" } });
      }
      return schema;
    }
    // Strings only: the database reads each one in its type's text forms, and what it cannot read
    // is that op's refusal. A char(n) is blank-padded (char_length counts it without its trailing
    // blanks, so no length bound is compared here; its own length is the database's: too_long).
    // A bytea takes hex (\x0a1b) or escape text (the string's UTF-8 bytes, \\ a backslash, \nnn an
    // octal byte), and a pull prints hex; an interval Postgres' ("1 day 02:00:00", "3 hours") or
    // ISO 8601 ("P1Y2M", "PT1H").
    case "character":
    case "bpchar":
    case "bytea":
    case "interval":
      return storableText(ANY_TEXT_LENGTH);
    case "name":
      // Postgres cuts a longer one to its first 63 bytes without a word.
      return bytesAtMost(storableText(ANY_TEXT_LENGTH), MAX_NAME_BYTES, `must be at most ${MAX_NAME_BYTES} bytes (a name)`);
    case "boolean":
      return z.boolean();
    case "date":
      return z.iso.date({ abort: true, error: "must be a date, YYYY-MM-DD" }).refine((value) => !value.startsWith("0000"), OUT_OF_WIRE_RANGE);
    case "timestamp with time zone":
      return z.iso.datetime({ offset: true, abort: true, error: "must be an ISO 8601 instant with its offset, YYYY-MM-DDTHH:MM[:SS[.ffffff]] and Z or ±HH:MM" }).refine(...secondsKeptWhole(field)).refine(isWireInstant, OUT_OF_WIRE_RANGE);
    case "timestamp without time zone":
      // Without an offset: the column would drop it silently (10:00+05:00 stored as 10:00).
      return z.iso.datetime({ local: true, abort: true, error: "must be an ISO 8601 date and time without offset, YYYY-MM-DDTHH:MM[:SS[.ffffff]]" })
        .refine((value) => !/z$/i.test(value), { message: "must have no offset (a timestamp without time zone)", params: { code: "invalid_format" }, abort: true })
        .refine(...secondsKeptWhole(field))
        .refine((value) => isWireInstant(`${value}Z`), OUT_OF_WIRE_RANGE);
    case "time without time zone":
      return z.string()
        .refine((value) => TIME_OF_DAY.test(value), { message: "must be a time of day, HH:MM[:SS[.ffffff]] (24:00:00 at most)", params: { code: "invalid_format" }, abort: true })
        .refine(...secondsKeptWhole(field));
    case "time with time zone":
      // Its text forms (10:00:00.5+05:30, 10:00 PST, …) are the database's to read; the fraction of its second is ours to check.
      return storableText(ANY_TEXT_LENGTH).refine(...secondsKeptWhole(field));
    case "double precision":
    case "real":
      return z.number();
    case "numeric":
      return numericSchema(field);
    case "json":
    case "jsonb":
      // Any JSON value, stored as sent; what the database could not even receive is refused here.
      return jsonValueSchema();
    default:
      return uncheckedTypeSchema(field.category);
  }
}

/**
 * A value of a type with no schema here (citext, inet, ltree, int4range, bit, money, an extension's
 * type): the database reads it from text (jsonb_to_recordset turns any JSON into that text: `12`,
 * `true` or `{"a": 1}` would be stored in a citext as "12", "true", '{"a": 1}'), and a pull prints
 * it as to_json does, its text as a JSON string. So a string, which the database parses (what it
 * cannot read is that op's refusal), whatever the type's category (pg_type.typcategory: S, U, I,
 * G, R, V, N, D, …); but a composite's (C) is an object (populate_record reads its fields, to_json
 * prints one). A field published by a server older than `category` keeps any JSON value.
 */
function uncheckedTypeSchema(category: string | undefined): z.ZodType {
  if (category === undefined) return jsonValueSchema();
  if (category === "C") {
    return jsonValueSchema().refine((value) => typeof value === "object" && value !== null && !Array.isArray(value), {
      message: "must be an object (a composite type's fields)",
      params: { code: "invalid_type" },
    });
  }
  return storableText(ANY_TEXT_LENGTH);
}

/** Types that keep a number as the digits the push writes. */
const EXACT_NUMBER_TYPES = new Set([...Object.keys(INT_RANGE), "numeric", "json", "jsonb"]);
/** Types that hold no number (fieldValueSchema refuses one as the wrong type). */
const NUMBERLESS_TYPES = new Set([
  "uuid", "text", "character varying", "character", "bpchar", "bytea", "interval", "name", "boolean",
  "date", "timestamp with time zone", "timestamp without time zone", "time without time zone", "time with time zone",
]);
/** Types that keep a double: a number with more digits than a double holds is what the column makes of it (as for SQL). */
const DOUBLE_TYPES = new Set(["double precision", "real"]);

/**
 * Whether a number in this field's value (an integer, numeric, json or jsonb column, an array of
 * them) is stored as the digits the push writes: then one that JSON.parse did not read exactly
 * must be refused (`not_exact`, inexact-numbers.ts), or it would be stored as another number.
 */
export function storesExactNumbers(field: GeneratedField): boolean {
  const type = valueType(field).replace(/\[\]$/, "");
  if (field.enum_values || NUMBERLESS_TYPES.has(type) || DOUBLE_TYPES.has(type)) return false;
  if (EXACT_NUMBER_TYPES.has(type)) return true;
  // A type with no schema here takes a string, but a composite's fields may hold a number, and so
  // may any value of a field published without its category (uncheckedTypeSchema).
  return field.category === undefined || field.category === "C";
}

/**
 * Whether Postgres may print this field's value with a number a double cannot hold: a bigint past
 * 2^53, a numeric, a number in a json document (not a smallint or integer: they fit; not a double
 * precision or real: printed as the shortest text of its double).
 */
export function printsLongNumbers(field: GeneratedField): boolean {
  const type = valueType(field).replace(/\[\]$/, "");
  return storesExactNumbers(field) && type !== "smallint" && type !== "integer";
}

const refused = (message: string) =>
  z.any().superRefine((_value, ctx) => {
    ctx.addIssue({ code: "custom", message, params: { code: "read_only" } });
  });
/** A column something of the database's fills (a default, an identity, a generation, a BEFORE INSERT trigger). */
const serverSet = refused("is set by the server");
/**
 * A column no client may write and nothing fills: "set by the server" would be false (a NOT NULL
 * one left so makes every create fail, which npm run generate refuses; a nullable one stays null).
 */
const notClientSet = refused("cannot be set by clients");
/**
 * A column the device sets at create but may not change (granted insert, not update: a scope
 * column kept so rows cannot move). Sent in an update it is refused even with its unchanged
 * value: accepting that would need the stored row here, before the push reads it.
 */
const createOnly = refused("cannot be changed after the record is created");
/** A column the device may change but not set at create (granted update, not insert: a membership's role). */
const changeOnly = refused("cannot be set when the record is created, only changed afterwards");

/** Whether a client may create records in a table of these fields: it may insert some column (the client's pre-check asks too). */
export function isCreatable(fields: readonly Pick<GeneratedField, "insertable">[]): boolean {
  return fields.some((f) => f.insertable);
}

/** The create or update schema of a table's fields (also what the client builds from GET /v1/meta). */
export function schemaFor(collection: Pick<GeneratedCollection, "fields">, mode: "create" | "update"): z.ZodType<Patch> {
  const shape: Record<string, z.ZodType> = {};
  for (const field of collection.fields) {
    const writable = mode === "create" ? field.insertable : field.updatable;
    if (!writable) {
      const filled = field.has_default || field.filled_by_trigger === true;
      const other = mode === "update" ? field.insertable : field.updatable;
      shape[field.name] = (other ? (mode === "update" ? createOnly : changeOnly) : filled ? serverSet : notClientSet).optional();
      continue;
    }
    const value = field.nullable ? fieldValueSchema(field).nullable() : fieldValueSchema(field);
    // A column a BEFORE INSERT trigger may fill is left to the database (23502 answers `required`).
    const required = mode === "create" && !field.nullable && !field.has_default && !field.filled_by_trigger;
    shape[field.name] = required ? value : value.optional();
  }
  return z.strictObject(shape) as unknown as z.ZodType<Patch>;
}

function define(collection: GeneratedCollection): CollectionDefinition {
  return {
    name: collection.name,
    table: collection.table,
    scopeColumn: collection.scope_column,
    scopeCollection: collection.scope_collection,
    isScope: collection.scope_column === "id",
    fields: collection.fields,
    serverFields: new Set(collection.fields.filter((f) => !f.insertable && !f.updatable).map((f) => f.name)),
    memberColumn: collection.membership_user_column,
    creatable: isCreatable(collection.fields),
    create: schemaFor(collection, "create"),
    update: schemaFor(collection, "update"),
    constraints: collection.constraints,
    references: new Set(collection.references),
    foreignKeys: new Map(Object.entries(collection.foreign_keys)),
    exactNumberFields: new Set(collection.fields.filter(storesExactNumbers).map((f) => f.name)),
    mayHoldInexactNumbers: collection.fields.some(printsLongNumbers),
  };
}

const REGISTRY: ReadonlyMap<string, CollectionDefinition> = new Map(SYNC_COLLECTIONS.map((c) => [c.name, define(c)]));

export function collectionNames(): string[] {
  return [...REGISTRY.keys()];
}

export function allCollections(): CollectionDefinition[] {
  return [...REGISTRY.values()];
}

/** The collection's definition, or undefined for a name the server does not know. */
export function findCollection(name: string): CollectionDefinition | undefined {
  return REGISTRY.get(name);
}

/** The collection whose rows are this collection's scopes (itself for a scope table). */
export function scopeCollection(collection: CollectionDefinition): CollectionDefinition | undefined {
  return REGISTRY.get(collection.scopeCollection);
}

/** What GET /v1/meta publishes per collection: its scope column and each field's type and writability. */
export function collectionSchemas(): Record<string, { scope: string; fields: Record<string, Omit<GeneratedField, "name">> }> {
  return Object.fromEntries(allCollections().map((c) => [
    c.name,
    { scope: c.scopeColumn, fields: Object.fromEntries(c.fields.map(({ name, ...rest }) => [name, rest])) },
  ]));
}
