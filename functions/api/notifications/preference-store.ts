// The database side of GET/PUT /v1/users/me/notifications. Runs inside
// deps.db.withUser (role `authenticated`, RLS: own row only). The triggers of
// app_private.notification_preferences own `version` and `updated_at` and
// append every change to the audit trail (docs/notification-preferences.md).
import { ApiError } from "../../_shared/errors.ts";
import { ifMatchAccepts } from "../../_shared/etag.ts";
import {
  DEFAULT_QUIET_HOURS,
  NOTIFICATION_CATEGORY_NAMES,
  NOTIFICATION_CHANNELS,
  type NotificationCategories,
  withDefaultCategories,
} from "../../_shared/notification-categories.ts";
import type { NotificationPreferences, NotificationPreferencesPut } from "../../_shared/schemas/notifications.ts";
import type { Tx } from "../lib/db.ts";

interface PreferenceRow {
  version: number;
  updated_at: Date;
  categories: Partial<NotificationCategories>;
  quiet_hours_enabled: boolean;
  quiet_hours_start: string;
  quiet_hours_end: string;
  quiet_hours_timezone: string;
}

/** The document of a stored row, or the defaults (version 0) when there is none. */
function toDocument(row: PreferenceRow | undefined): NotificationPreferences {
  if (!row) {
    return { version: 0, updated_at: null, categories: withDefaultCategories({}), quiet_hours: { ...DEFAULT_QUIET_HOURS } };
  }
  return {
    version: row.version,
    updated_at: row.updated_at.toISOString(),
    // A category declared after this row was saved shows its default.
    categories: withDefaultCategories(row.categories),
    quiet_hours: {
      enabled: row.quiet_hours_enabled,
      start: row.quiet_hours_start,
      end: row.quiet_hours_end,
      timezone: row.quiet_hours_timezone,
    },
  };
}

/** What a PUT stores: only declared categories and channels (the answer schema would also keep unknown ones). */
type Content = { categories: NotificationCategories; quiet_hours: NotificationPreferencesPut["quiet_hours"] };

function sameContent(a: Content, b: Content): boolean {
  const sameCategories = NOTIFICATION_CATEGORY_NAMES.every((name) =>
    NOTIFICATION_CHANNELS.every((channel) => a.categories[name][channel] === b.categories[name][channel]));
  const qa = a.quiet_hours;
  const qb = b.quiet_hours;
  return sameCategories && qa.enabled === qb.enabled && qa.start === qb.start && qa.end === qb.end && qa.timezone === qb.timezone;
}

const COLUMNS = ["version", "updated_at", "categories", "quiet_hours_enabled", "quiet_hours_start", "quiet_hours_end", "quiet_hours_timezone"];

export async function readPreferences(tx: Tx, userId: string): Promise<NotificationPreferences> {
  const [row] = await tx<PreferenceRow[]>`
    select ${tx(COLUMNS)} from app_private.notification_preferences where user_id = ${userId}`;
  return toDocument(row);
}

function stale(): ApiError {
  return new ApiError("PRECONDITION_FAILED", "the preferences changed since the version you sent; GET them again and reapply your change");
}

/**
 * Replaces the caller's whole document. `ifMatch` is the parsed If-Match
 * header ("any" = no precondition); a `version` in the body is a precondition
 * too. Both are checked against the current version under a row lock, so two
 * writers that read the same version cannot both succeed. Sending the
 * current content again changes nothing (no new version, no audit row).
 */
export async function replacePreferences(
  tx: Tx,
  userId: string,
  body: NotificationPreferencesPut,
  ifMatch: "any" | number[],
): Promise<NotificationPreferences> {
  const [current] = await tx<PreferenceRow[]>`
    select ${tx(COLUMNS)} from app_private.notification_preferences where user_id = ${userId} for update`;
  const currentVersion = current?.version ?? 0;
  const conditional = ifMatch !== "any" || body.version !== undefined;
  if (!ifMatchAccepts(ifMatch, currentVersion) || (body.version !== undefined && body.version !== currentVersion)) {
    throw stale();
  }

  const next: Content = { categories: withDefaultCategories(body.categories), quiet_hours: body.quiet_hours };
  // Without a row the current content is the defaults (version 0): saving
  // them unchanged stores nothing, so another device's ETag "0" stays valid.
  const currentDocument = toDocument(current);
  if (sameContent(currentDocument, next)) return currentDocument;

  const values = {
    categories: tx.json(next.categories),
    enabled: next.quiet_hours.enabled,
    start: next.quiet_hours.start,
    end: next.quiet_hours.end,
    timezone: next.quiet_hours.timezone,
  };
  let row: PreferenceRow | undefined;
  if (current) {
    [row] = await tx<PreferenceRow[]>`
      update app_private.notification_preferences set
        categories = ${values.categories},
        quiet_hours_enabled = ${values.enabled},
        quiet_hours_start = ${values.start},
        quiet_hours_end = ${values.end},
        quiet_hours_timezone = ${values.timezone}
      where user_id = ${userId}
      returning ${tx(COLUMNS)}`;
  } else {
    // No row to lock: a concurrent first save may commit first (a retry of this very PUT
    // sent while the first was in flight). Then a conditional PUT (it expected version 0) is
    // stale; an unconditional one is judged again against what that save wrote: the same
    // content changes nothing, other content replaces it (a version and an audit row).
    [row] = await tx<PreferenceRow[]>`
      insert into app_private.notification_preferences
        (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
      values (${userId}, ${values.categories}, ${values.enabled}, ${values.start}, ${values.end}, ${values.timezone})
      on conflict (user_id) do nothing
      returning ${tx(COLUMNS)}`;
    if (!row) {
      if (conditional) throw stale();
      // A statement of its own reads the save that committed (READ COMMITTED), now a row to lock.
      return await replacePreferences(tx, userId, body, ifMatch);
    }
  }
  return toDocument(row);
}
