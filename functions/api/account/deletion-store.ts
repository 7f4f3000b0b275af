// The database side of account deletion. Runs inside deps.db.withUser (role
// `authenticated`, the verified claims): the caller reads their own request
// under RLS; requesting and cancelling go through the two narrow security
// definer functions of 20261122050000_account_deletion.sql, which act only on
// auth.uid() (they sign out the other sessions and write the audit trail).
import type { DeletionState } from "../../_shared/schemas/account-deletion.ts";
import type { Tx } from "../lib/db.ts";
import { wireNow } from "../sync/wire-time.ts";

interface RequestRow {
  requested_at: Date;
  scheduled_for: Date;
}

type Scheduled = { status: "scheduled"; requested_at: string; scheduled_for: string };

function scheduled(row: RequestRow): Scheduled {
  return { status: "scheduled", requested_at: row.requested_at.toISOString(), scheduled_for: row.scheduled_for.toISOString() };
}

/** The caller's deletion state (RLS: their own request only). */
export async function readDeletion(tx: Tx, userId: string): Promise<DeletionState> {
  const [row] = await tx<RequestRow[]>`
    select requested_at, scheduled_for from app_private.account_deletion_requests where user_id = ${userId}`;
  return row ? scheduled(row) : { status: "none", requested_at: null, scheduled_for: null };
}

/**
 * Schedules the caller's deletion `graceDays` from now (a pending request
 * keeps its date), signs out every other session and clears push tokens.
 * `serverTime`: the transaction's now() (a new request's requested_at), in the wire format.
 */
export async function requestDeletion(tx: Tx, graceDays: number): Promise<{ state: Scheduled; serverTime: string }> {
  const [row] = await tx<(RequestRow & { server_time: string })[]>`
    select requested_at, scheduled_for, ${wireNow(tx)} as server_time
    from app_private.request_account_deletion(${graceDays})`;
  return { state: scheduled(row), serverTime: row.server_time };
}

/** Cancels the caller's pending deletion; false when there was none. */
export async function cancelDeletion(tx: Tx): Promise<boolean> {
  const [row] = await tx<{ cancelled: boolean }[]>`select app_private.cancel_account_deletion() as cancelled`;
  return row.cancelled;
}
