// Valid values for a documented JSON Schema, as fast-check arbitraries. The
// fuzzer starts from a value the route should accept and then breaks it in one
// place, so the answer proves the route's validation of that place and not
// merely that garbage is rejected at the door.
import fc from "fast-check";
import { type JsonSchema, type OpenApiDocument, resolveRef } from "./openapi-operations.ts";

const MAX_DEPTH = 6;
/** Keeps valid arrays and strings small; oversize values come from the mutators. */
const EXTRA_ITEMS = 3;
const EXTRA_CHARS = 24;

function examplesOf(schema: JsonSchema): unknown[] {
  const out: unknown[] = [];
  if (schema.default !== undefined) out.push(schema.default);
  if (schema.example !== undefined) out.push(schema.example);
  if (Array.isArray(schema.examples)) out.push(...schema.examples);
  return out;
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? minLength + EXTRA_CHARS, minLength + EXTRA_CHARS));
  const fitsLength = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
  switch (schema.format) {
    case "uuid":
      return fc.uuid({ version: 4 });
    case "date-time":
      return fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString());
    case "date":
      return fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case "email":
      return fc.emailAddress().filter(fitsLength);
    case "uri":
    case "url":
      return fc.webUrl().filter(fitsLength);
  }
  if (schema.pattern) {
    let pattern: RegExp | undefined;
    try {
      pattern = new RegExp(schema.pattern);
    } catch {
      pattern = undefined;
    }
    if (pattern) return fc.stringMatching(pattern).filter(fitsLength);
  }
  return fc.string({ minLength, maxLength });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const lower = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : undefined);
  const upper = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : undefined);
  if (integer) {
    const min = Math.max(Math.ceil(lower ?? -1_000_000), Number.MIN_SAFE_INTEGER);
    const max = Math.min(Math.floor(upper ?? Math.max(min, 0) + 1_000_000), Number.MAX_SAFE_INTEGER);
    return fc.integer({ min, max: Math.max(min, max) });
  }
  return fc.double({ min: lower ?? -1e6, max: upper ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/**
 * What the document cannot say but a useful valid value needs: the names the
 * server knows for free-form string properties (e.g. `collection`).
 */
export interface SchemaHints {
  /** property name → values the deployment accepts (GET /v1/meta) */
  knownValues?: Record<string, string[]>;
}

function objectArbitrary(doc: OpenApiDocument, schema: JsonSchema, depth: number, hints: SchemaHints): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    const generic = schemaArbitrary(doc, property, depth + 1, hints);
    const known = hints.knownValues?.[name];
    model[name] = known && known.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generic }) : generic;
  }
  const fixed = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
  const extra = schema.additionalProperties;
  if (extra && typeof extra === "object") {
    const keyPattern = schema.propertyNames?.pattern;
    const key = keyPattern ? fc.stringMatching(new RegExp(keyPattern)) : fc.string({ minLength: 1, maxLength: 12 });
    const dictionary = fc.dictionary(key, schemaArbitrary(doc, extra, depth + 1, hints), { maxKeys: EXTRA_ITEMS });
    return fc.tuple(fixed, dictionary).map(([a, b]) => ({ ...b, ...a }));
  }
  return fixed as fc.Arbitrary<Record<string, unknown>>;
}

function mergeAllOf(doc: OpenApiDocument, parts: JsonSchema[]): JsonSchema {
  const merged: JsonSchema = {};
  for (const raw of parts) {
    const part = resolveRef(doc, raw);
    Object.assign(merged, part, {
      properties: { ...(merged.properties ?? {}), ...(part.properties ?? {}) },
      required: [...(merged.required ?? []), ...(part.required ?? [])],
    });
  }
  delete merged.allOf;
  return merged;
}

/** An arbitrary of values valid for `schema` (as far as JSON Schema says). */
export function schemaArbitrary(doc: OpenApiDocument, raw: JsonSchema | undefined, depth = 0, hints: SchemaHints = {}): fc.Arbitrary<unknown> {
  const schema = resolveRef(doc, raw);
  if (depth > MAX_DEPTH) return fc.constant(null);
  const examples = examplesOf(schema);
  const base = baseArbitrary(doc, schema, depth, hints);
  return examples.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...examples), weight: 1 }, { arbitrary: base, weight: 3 }) : base;
}

function baseArbitrary(doc: OpenApiDocument, schema: JsonSchema, depth: number, hints: SchemaHints): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  if (schema.allOf) return schemaArbitrary(doc, mergeAllOf(doc, schema.allOf), depth, hints);
  const union = schema.anyOf ?? schema.oneOf;
  if (union && union.length > 0) return fc.oneof(...union.map((member) => schemaArbitrary(doc, member, depth + 1, hints)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ["object"] : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case "string":
        return stringArbitrary(schema);
      case "integer":
        return numberArbitrary(schema, true);
      case "number":
        return numberArbitrary(schema, false);
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const minLength = schema.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? minLength + EXTRA_ITEMS, minLength + EXTRA_ITEMS));
        return fc.array(schemaArbitrary(doc, schema.items, depth + 1, hints), { minLength, maxLength });
      }
      case "object":
        return objectArbitrary(doc, schema, depth, hints);
      default:
        return fc.jsonValue({ maxDepth: 1 });
    }
  }));
}
