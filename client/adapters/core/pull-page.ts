// One page of GET /v1/sync/changes for an adapter, with the two answers that
// mean "start again from scratch" handled the same way the client does:
// 410 RESYNC_REQUIRED (the cursor is older than the server keeps) and
// 400 INVALID_CURSOR (the cursor secret rotated). The page then comes from a
// full sync, and `full` tells the adapter to drop what the full sync does not list.
import type { ChangesResponse, SyncRecord } from "../../../functions/_shared/schemas/sync.ts";
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
 * The record as the server lists it to this user now; null when it lists none (never stored,
 * deleted, or out of the user's sight). The API has no read of one record: this reads a full
 * listing of its collection, up to the page that holds it, in pages of `limit` (the adapter's pull
 * limit; the server's default when unset), and keeps no cursor. For the rare record no push
 * answer showed (an op refused before the server judged it).
 */
export async function listedRecord(api: TidesyncApi, collection: string, id: string, limit: number | undefined, retry: RetryOptions): Promise<SyncRecord | null> {
  let cursor: string | undefined;
  for (;;) {
    const page = await withRetry(() => api.syncChanges({ cursor, collections: [collection], limit }), retry);
    const found = page.changes.find((change) => change.collection === collection && change.id === id);
    if (found) return found.deleted ? null : found;
    if (!page.has_more) return null;
    cursor = page.cursor;
  }
}
