// The local pre-check of writes, built from what GET /v1/meta publishes
// (`collections`, `collection_schemas`): the client knows the server's
// collections and field types without being rebuilt when a table is made
// syncable. The zod schemas come from the same builder the server validates
// with (functions/_shared/collections.ts): `create` when the record is not
// live on this device, `update` when it is. The server still has the last word.
// The same schemas normalise what they accept (uuid fields lower-cased), also
// for data queued unchecked (`normalise`).
// A catalog read from storage may predate the server's schema (a table made
// syncable, a field added since it was fetched): it checks what it knows and
// leaves names it does not know to the server, as when no schema is known.
import type { z } from "zod";
import { fieldValueSchema, type GeneratedField, isCreatable, schemaFor } from "../functions/_shared/collections.ts";
import { validationMessage, zodIssuesToDetails } from "../functions/_shared/validation-details.ts";
import { TidesyncValidationError } from "./api-error.ts";
import type { RecordData, ServerSchema } from "./storage.ts";

interface Checks {
  create: z.ZodType<RecordData>;
  update: z.ZodType<RecordData>;
  /** Each field's value schema: what `normalise` parses a value with. */
  fields: Map<string, z.ZodType>;
  /** Some field is insertable: else no client creates records in it (the server answers FORBIDDEN). */
  creatable: boolean;
}

export class CollectionCatalog {
  /** Collection name → its checks (null: the server named it without fields, so only the name is checked). */
  private readonly checks = new Map<string, Checks | null>();

  /** `stored`: read from storage, not fetched in this session, so it may not know every name the server takes. */
  private readonly stored: boolean;

  constructor(readonly schema: ServerSchema, options: { stored?: boolean } = {}) {
    this.stored = options.stored ?? false;
    const names = new Set([...schema.collections, ...Object.keys(schema.collection_schemas)]);
    for (const name of names) {
      const described = schema.collection_schemas[name];
      if (!described) {
        this.checks.set(name, null);
        continue;
      }
      const fields: GeneratedField[] = Object.entries(described.fields).map(([field, spec]) => ({ name: field, ...spec }));
      this.checks.set(name, {
        create: schemaFor({ fields }, "create"),
        update: schemaFor({ fields }, "update"),
        fields: new Map(fields.map((field) => [field.name, fieldValueSchema(field)])),
        creatable: isCreatable(fields),
      });
    }
  }

  /** Whether the server named `collection` in the GET /v1/meta this catalog was built from. */
  has(collection: string): boolean {
    return this.checks.has(collection);
  }

  /**
   * The data to queue (normalised: uuid fields lower-cased), or a
   * TidesyncValidationError naming the fields the server would refuse.
   * `data` null (a delete) checks the collection only. A `stored` catalog
   * lets an unknown collection through unchecked, and unknown fields as they
   * are beside the known ones, checked.
   */
  check(collection: string, data: RecordData | null, creating: boolean): RecordData | null {
    if (!this.checks.has(collection)) {
      if (this.stored) return data;
      const known = [...this.checks.keys()].sort().join(", ") || "none";
      throw new TidesyncValidationError(`unknown collection ${JSON.stringify(collection)} (this server syncs: ${known})`, [
        { field: "/collection", code: "unknown_collection", message: `is not a collection of this server (GET /v1/meta lists: ${known})` },
      ]);
    }
    const checks = this.checks.get(collection);
    if (data === null || !checks) return data;
    if (creating && !checks.creatable) {
      // A table that grants clients no insert (list_members: members join through invites): each
      // field's read_only would only hide that no create of it is taken.
      throw new TidesyncValidationError(`no client may create records in "${collection}"`, [
        { field: "/collection", code: "not_creatable", message: "is not a collection clients create records in (the server answers such a create FORBIDDEN)" },
      ]);
    }
    const unknown = this.stored ? Object.fromEntries(Object.entries(data).filter(([field]) => !checks.fields.has(field))) : {};
    const known = this.stored ? Object.fromEntries(Object.entries(data).filter(([field]) => checks.fields.has(field))) : data;
    const parsed = (creating ? checks.create : checks.update).safeParse(known);
    if (parsed.success) return { ...parsed.data, ...unknown };
    const details = zodIssuesToDetails(parsed.error.issues, known, ["data"]);
    throw new TidesyncValidationError(validationMessage(details.length), details);
  }

  /**
   * `data` as the server will store it, checking nothing: each value its
   * field's schema accepts in the form that schema gives it (a uuid field
   * lower-cased; text, even text that looks like a uuid, as it is); any other
   * value or field unchanged, for the server to judge.
   */
  normalise(collection: string, data: RecordData): RecordData {
    const fields = this.checks.get(collection)?.fields;
    if (!fields) return data;
    return Object.fromEntries(Object.entries(data).map(([name, value]) => {
      const parsed = fields.get(name)?.safeParse(value);
      return [name, parsed?.success ? parsed.data : value];
    }));
  }
}
