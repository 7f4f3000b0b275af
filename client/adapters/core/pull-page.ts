// One page of GET /v1/sync/changes for an adapter, with the two answers that
// mean "start again from scratch" handled the same way the client does:
// 410 RESYNC_REQUIRED (the cursor is older than the server keeps) and
// 400 INVALID_CURSOR (the cursor secret rotated). The page then comes from a
// full sync, and `full` tells the adapter to drop what the full sync does not list.
import { type ChangesResponse, isRecordNotFound, type SyncRecord } from "../../../functions/_shared/schemas/sync.ts";
import type { TidesyncApi } from "../../api-client.ts";
import { TidesyncApiError } from "../../api-error.ts";
import { type RetryOptions, withRetry } from "../../retry.ts";

export interface PulledPage {
  page: ChangesResponse;
  /**
   * The first page of a full sync (`reset`; a server from before the flag:
   * no cursor was sent): the pages up to has_more false list every record the
   * caller may see; drop the local ones they do not list.
   */
  full: boolean;
  /** Why a cursor was given up, when it was. */
  resync: "RESYNC_REQUIRED" | "INVALID_CURSOR" | null;
}

export interface PullParams {
  cursor: string | null;
  collections?: readonly string[];
  limit?: number;
}

export async function pullPage(api: TidesyncApi, params: PullParams, retry: RetryOptions): Promise<PulledPage> {
  const fetchPage = (cursor: string | null) =>
    withRetry(() => api.syncChanges({ cursor: cursor ?? undefined, collections: params.collections, limit: params.limit }), retry);
  if (params.cursor === null) return { page: await fetchPage(null), full: true, resync: null };
  try {
    const page = await fetchPage(params.cursor);
    return { page, full: page.reset, resync: null };
  } catch (error) {
    if (!(error instanceof TidesyncApiError) || (error.code !== "RESYNC_REQUIRED" && error.code !== "INVALID_CURSOR")) throw error;
    return { page: await fetchPage(null), full: true, resync: error.code };
  }
}

/**
 * The record as the server has it for this user now; null when it has none they can see (never
 * stored, deleted, or out of their sight). One read of the record (GET /v1/sync/records), for the
 * rare record no push answer showed (an op refused before the server judged it). A server from
 * before that route (its 404 is an unknown route's: a function rolled back) is asked as it used
 * to be: a full listing of the record's collection, up to the page that holds it, in pages of
 * `limit` (the adapter's pull limit; the server's default when unset), keeping no cursor.
 */
export async function serverRecord(api: TidesyncApi, collection: string, id: string, limit: number | undefined, retry: RetryOptions): Promise<SyncRecord | null> {
  try {
    const record = await withRetry(() => api.syncRecord(collection, id), retry);
    return record.deleted ? null : record;
  } catch (error) {
    if (!(error instanceof TidesyncApiError) || error.code !== "NOT_FOUND") throw error;
    if (isRecordNotFound(error.details)) return null;
  }
  let cursor: string | undefined;
  for (;;) {
    const page = await withRetry(() => api.syncChanges({ cursor, collections: [collection], limit }), retry);
    const found = page.changes.find((change) => change.collection === collection && change.id === id);
    if (found) return found.deleted ? null : found;
    if (!page.has_more) return null;
    cursor = page.cursor;
  }
}
