// The sync collections, declared once: each has a zod schema for the PATCH an
// upsert op carries (every field optional, unknown fields rejected), which is
// also what a stored record's data satisfies. GET /v1/meta lists the names,
// POST /v1/sync/batch validates each op's data here, the client pre-checks
// with the same schemas. The sample to-do app's `lists` and `tasks` ship as
// the example a real app replaces.
import { z } from "zod";
import { storableText } from "./storable-text.ts";

/** Field names become keys of records.field_versions; "*" is reserved there. */
const FIELD_NAME = /^[a-z][a-z0-9_]{0,62}$/;
/** Same rule as the database's records_collection_format check. */
const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;


/** A patch schema: every field optional, unknown fields rejected. */
type PatchSchema = z.ZodType<Record<string, unknown>>;

export interface CollectionDefinition {
  name: string;
  description: string;
  patch: PatchSchema;
}

function collection(name: string, description: string, fields: z.ZodRawShape): CollectionDefinition {
  if (!COLLECTION_NAME.test(name)) throw new Error(`collection name ${name} must match ${COLLECTION_NAME}`);
  for (const field of Object.keys(fields)) {
    if (!FIELD_NAME.test(field)) throw new Error(`field ${name}.${field} must match ${FIELD_NAME}`);
  }
  return { name, description, patch: z.strictObject(fields).partial() as unknown as PatchSchema };
}

const position = z.number().describe("sort key within its parent; any finite number (fractional indexing)");

const SAMPLE_TODO_COLLECTIONS: CollectionDefinition[] = [
  collection("lists", "Sample to-do app: a list of tasks.", {
    title: storableText(200, 1),
    color: z.string().regex(/^#[0-9a-fA-F]{6}$/, "must be a #rrggbb color").nullable(),
    position,
    archived: z.boolean(),
  }),
  collection("tasks", "Sample to-do app: a task, optionally in a list.", {
    title: storableText(200, 1),
    notes: storableText(10_000).nullable(),
    done: z.boolean(),
    due_date: z.iso.date().nullable().describe("a calendar date, YYYY-MM-DD"),
    position,
    list_id: z.uuid().nullable().describe("id of a record in `lists` (not checked: it may arrive in a later batch)"),
  }),
];

const REGISTRY: ReadonlyMap<string, CollectionDefinition> = new Map(SAMPLE_TODO_COLLECTIONS.map((c) => [c.name, c]));

export function collectionNames(): string[] {
  return [...REGISTRY.keys()];
}

/** The collection's definition, or undefined for a name the server does not know. */
export function findCollection(name: string): CollectionDefinition | undefined {
  return REGISTRY.get(name);
}
