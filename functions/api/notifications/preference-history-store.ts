// Reads the caller's notification preference audit trail (append-only, written
// by the table's trigger). Runs inside deps.db.withUser: the RLS policy "Users
// can read their own notification preference audit" is what scopes it; the
// user_id filter only lets the primary key (user_id, id) drive the scan.
import { type NotificationCategories, type QuietHours, withDefaultCategories } from "../../_shared/notification-categories.ts";
import type { NotificationHistoryResponse } from "../../_shared/schemas/notifications.ts";
import type { Tx } from "../lib/db.ts";

type Entry = NotificationHistoryResponse["entries"][number];
interface StoredDocument {
  categories: Partial<NotificationCategories>;
  quiet_hours: QuietHours;
}

/** An audited document as GET shows a row: a category declared after it was written shows its default. */
function withDefaults(document: StoredDocument): Entry["new"] {
  return { categories: withDefaultCategories(document.categories), quiet_hours: document.quiet_hours };
}

export async function readPreferenceHistory(
  tx: Tx,
  userId: string,
  page: { limit: number; before?: number },
): Promise<Omit<NotificationHistoryResponse, "server_time">> {
  const rows = await tx<(Omit<Entry, "id" | "changed_at" | "old" | "new"> & { id: string; changed_at: Date; old: StoredDocument | null; new: StoredDocument })[]>`
    select a.id, a.changed_at, a.device_id, a.old_version, a.new_version, a.old_document as old, a.new_document as new
    from app_private.notification_preference_audit a
    where a.user_id = ${userId}::uuid
      and (${page.before ?? null}::bigint is null or a.id < ${page.before ?? null}::bigint)
    order by a.id desc
    limit ${page.limit + 1}`;
  const entries = rows.slice(0, page.limit).map((row) => ({
    ...row,
    id: Number(row.id),
    changed_at: row.changed_at.toISOString(),
    old: row.old && withDefaults(row.old),
    new: withDefaults(row.new),
  }));
  const hasMore = rows.length > page.limit;
  return { entries, has_more: hasMore, next_before: hasMore ? entries[entries.length - 1].id : null };
}
