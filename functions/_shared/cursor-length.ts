// The longest pull cursor: the server never issues a longer one, and the
// query schema of GET /v1/sync/changes (schemas/sync.ts) and the cursor's
// decoder (functions/api/sync/cursor.ts) both refuse one, so the two cannot
// disagree (a cursor the server issued and its own query schema refused would
// stop a device's full sync with a 400 it cannot get past).

/**
 * Longest cursor accepted before any crypto runs. Real ones are ~180 to ~530
 * chars (a full sync catching up on scopes it passed carries two keys and two
 * snapshots) plus ~11 per synced collection; with 63-character collection names, 20-digit txids,
 * the longest snapshots and MAX_SYNCED_COLLECTIONS, about 2,400 (tests/unit/sync-cursor.unit.test.ts).
 */
export const MAX_CURSOR_LENGTH = 2500;
