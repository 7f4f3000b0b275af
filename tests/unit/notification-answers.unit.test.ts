// An app built on an older client reads a newer server's preference document:
// the answer keeps what the client does not know (a category, a channel, a
// quiet-hours setting added later), so the app can send the document back
// whole instead of resetting what it never saw (a PUT replaces the document).
import { describe, expect, it } from "vitest";
import { notificationHistoryEntrySchema, notificationPreferencesSchema, notificationPreferencesPutSchema } from "../../functions/_shared/schemas/notifications.ts";
import { withDefaultCategories } from "../../functions/_shared/notification-categories.ts";

const newerServersDocument = {
  version: 3,
  updated_at: "2026-11-26T10:00:00.000Z",
  categories: {
    ...withDefaultCategories({}),
    reminders: { push: false, email: false, in_app: true, sms: true },
    weekly_digest: { push: false, email: true, in_app: false },
  },
  quiet_hours: { enabled: true, start: "22:00", end: "07:00", timezone: "Europe/Paris", weekends_only: true },
};

describe("notification preference answers from a newer server", () => {
  it("keep an unknown category, channel and quiet-hours setting, as sent", () => {
    const read = notificationPreferencesSchema.parse(newerServersDocument);
    expect(read).toEqual(newerServersDocument);
  });

  it("keep them in the history's documents too", () => {
    const entry = notificationHistoryEntrySchema.parse({
      id: 7, changed_at: "2026-11-26T10:00:00.000Z", device_id: null, old_version: 2, new_version: 3,
      old: null, new: { categories: newerServersDocument.categories, quiet_hours: newerServersDocument.quiet_hours },
    });
    expect(entry.new.categories).toHaveProperty("weekly_digest");
  });

  it("still check what they know", () => {
    const broken = { ...newerServersDocument, categories: { ...newerServersDocument.categories, security: { push: "yes", email: true, in_app: true } } };
    expect(notificationPreferencesSchema.safeParse(broken).success).toBe(false);
  });

  it("while a PUT this code builds is strict: an unknown category there is a typo", () => {
    const { version: _v, updated_at: _u, ...body } = newerServersDocument;
    const result = notificationPreferencesPutSchema.safeParse(body);
    expect(result.success).toBe(false);
  });
});
