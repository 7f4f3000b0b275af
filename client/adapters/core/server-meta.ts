// What an adapter needs from GET /v1/meta, fetched once per adapter object:
// the batch limits, the collections' scopes (a list's delete ends a batch that moves a record:
// client/batching.ts) and max_pull_limit, and which fields a device may send,
// per collection (a create sets the insertable ones, a change the updatable
// ones; a local database holds server-owned columns too, e.g. created_by and
// created_at, and sending them would get the op rejected as `read_only`).
import type { MetaResponse } from "../../../functions/_shared/schemas/meta.ts";
import type { TidesyncApi } from "../../api-client.ts";
import { type BatchBounds, batchBoundsOf } from "../../batching.ts";
import type { RecordData } from "../../storage.ts";
import { type RetryOptions, withRetry } from "../../retry.ts";

export interface ServerMeta {
  writable: WritableFields;
  bounds: BatchBounds;
  /** limits.max_pull_limit: the most changes a pull may ask for (pullLimitOf). */
  maxPullLimit: number;
}

/** GET /v1/meta, with the batch limits lowered to the app's caps where it set any. */
export async function loadServerMeta(api: TidesyncApi, retry: RetryOptions, caps: { maxOpsPerBatch?: number; maxBodyBytes?: number }): Promise<ServerMeta> {
  const meta = await withRetry(() => api.meta(), retry);
  const published = batchBoundsOf(meta.limits, meta.collection_schemas);
  return {
    writable: WritableFields.from(meta),
    bounds: {
      ...published,
      maxOps: Math.min(published.maxOps, caps.maxOpsPerBatch ?? published.maxOps),
      maxBodyBytes: Math.min(published.maxBodyBytes, caps.maxBodyBytes ?? published.maxBodyBytes),
    },
    maxPullLimit: meta.limits.max_pull_limit,
  };
}

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
