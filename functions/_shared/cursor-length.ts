// The longest pull cursor: the server never issues a longer one, and the
// query schema of GET /v1/sync/changes (schemas/sync.ts) and the cursor's
// decoder (functions/api/sync/cursor.ts) both refuse one, so the two cannot
// disagree (a cursor the server issued and its own query schema refused would
// stop a device's full sync with a 400 it cannot get past). Both refuse it as
// 400 INVALID_CURSOR, a cursor this server did not issue: the query's check
// (before the budget is spent) by the issue below, which the app's validation
// hook answers so, not as VALIDATION_FAILED, which a client sends again as is.
import type { z } from "zod";

/**
 * Longest cursor accepted before any crypto runs. Real ones are ~180 to ~530
 * chars (a full sync catching up on scopes it passed carries two keys and two
 * snapshots) plus ~11 per synced collection; with 63-character collection names, 20-digit txids,
 * the longest snapshots and MAX_SYNCED_COLLECTIONS, about 2,400 (tests/unit/sync-cursor.unit.test.ts).
 */
export const MAX_CURSOR_LENGTH = 2500;

/** The params of the query schema's issue for a cursor longer than MAX_CURSOR_LENGTH. */
export const CURSOR_NOT_ISSUED = { code: "cursor_not_issued" } as const;

/** Whether a validation issue is a cursor no server issues: answered 400 INVALID_CURSOR (functions/api/app.ts). */
export function isCursorNotIssued(issue: z.core.$ZodIssue): boolean {
  return issue.code === "custom" && issue.params?.code === CURSOR_NOT_ISSUED.code;
}
