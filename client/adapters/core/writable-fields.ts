// Which fields a device may send, per collection, from GET /v1/meta: a create
// sets the insertable ones, a change the updatable ones. A local database
// holds server-owned columns too (created_by, created_at); sending them would
// get the op rejected as `read_only`.
import type { MetaResponse } from "../../../functions/_shared/schemas/meta.ts";
import type { RecordData } from "../../storage.ts";

export class WritableFields {
  private constructor(private readonly byCollection: Map<string, { insert: Set<string>; update: Set<string> }>) {}

  static from(meta: Pick<MetaResponse, "collection_schemas">): WritableFields {
    const map = new Map<string, { insert: Set<string>; update: Set<string> }>();
    for (const [collection, schema] of Object.entries(meta.collection_schemas)) {
      const fields = Object.entries(schema.fields);
      map.set(collection, {
        insert: new Set(fields.filter(([, spec]) => spec.insertable).map(([name]) => name)),
        update: new Set(fields.filter(([, spec]) => spec.updatable).map(([name]) => name)),
      });
    }
    return new WritableFields(map);
  }

  /** The part of `data` a create (`creating`) or a change of `collection` may send. */
  pick(collection: string, data: RecordData, creating: boolean): RecordData {
    const allowed = this.byCollection.get(collection)?.[creating ? "insert" : "update"];
    if (!allowed) return data;
    return Object.fromEntries(Object.entries(data).filter(([field]) => allowed.has(field)));
  }
}
