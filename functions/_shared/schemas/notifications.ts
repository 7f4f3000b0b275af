// GET and PUT /v1/users/me/notifications: one preference document per user.
// Categories and channels come from ../notification-categories.ts (the one
// declaration); see docs/notification-preferences.md.
import { z } from "zod";
import { isIanaTimeZone } from "../locale-and-time-zone.ts";
import {
  NOTIFICATION_CATEGORIES,
  NOTIFICATION_CATEGORY_NAMES,
  type NotificationCategory,
  REQUIRED_NOTIFICATION_CATEGORIES,
} from "../notification-categories.ts";

export const channelSettingsSchema = z.strictObject({
  push: z.boolean(),
  email: z.boolean(),
  in_app: z.boolean(),
});

function categoriesShape<T extends z.ZodType>(value: T): Record<NotificationCategory, T> {
  return Object.fromEntries(NOTIFICATION_CATEGORY_NAMES.map((name) => [name, value])) as Record<NotificationCategory, T>;
}

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

export const clockTimeSchema = z.string().regex(HH_MM, "must be a 24-hour time HH:MM, e.g. 22:00");

export const timeZoneSchema = z.string().refine(isIanaTimeZone, {
  message: "must be an IANA time zone name, e.g. Europe/Paris",
  params: { code: "unknown_timezone" },
});

export const quietHoursSchema = z.strictObject({
  enabled: z.boolean(),
  start: clockTimeSchema.describe("local time the quiet hours begin (HH:MM); may be after `end` to span midnight"),
  end: clockTimeSchema.describe("local time the quiet hours end (HH:MM)"),
  timezone: timeZoneSchema.describe("IANA time zone of start and end"),
}).superRefine((value, ctx) => {
  if (value.enabled && value.start === value.end) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "must differ from start while quiet hours are enabled", params: { code: "empty_window" } });
  }
});
export type QuietHoursBody = z.infer<typeof quietHoursSchema>;

/** Categories in a PUT: only declared ones (others are unexpected fields); a left-out category keeps its default. */
export const categoriesInputSchema = z.strictObject(categoriesShape(channelSettingsSchema.optional()))
  .superRefine((categories, ctx) => {
    for (const name of REQUIRED_NOTIFICATION_CATEGORIES) {
      const settings = categories[name];
      if (settings && !settings.push && !settings.email && !settings.in_app) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `${name} notifications are required: keep at least one channel on`,
          params: { code: "required_category" },
        });
      }
    }
  })
  .describe("per category the channels; categories left out get their defaults. Declared categories: " +
    NOTIFICATION_CATEGORY_NAMES.map((n) => `${n}${NOTIFICATION_CATEGORIES[n].required ? " (required)" : ""}`).join(", "));

/** The document as GET and PUT answer it (ETag = `"<version>"`). */
export const notificationPreferencesSchema = z.object({
  version: z.number().int().min(0).describe("0 = the defaults (never saved); +1 on every change"),
  updated_at: z.string().datetime({ offset: true }).nullable().describe("last change; null for the defaults"),
  categories: z.object(categoriesShape(channelSettingsSchema)),
  quiet_hours: quietHoursSchema,
});
export type NotificationPreferences = z.infer<typeof notificationPreferencesSchema>;

/**
 * PUT body: the whole document. `version` and `updated_at` may be sent back
 * as read; `updated_at` is ignored (server-owned) and `version`, when sent, is
 * a precondition like If-Match (412 when it is not the current version).
 */
export const notificationPreferencesPutSchema = z.strictObject({
  version: z.number().int().min(0).optional(),
  updated_at: z.string().datetime({ offset: true }).nullable().optional(),
  categories: categoriesInputSchema,
  quiet_hours: quietHoursSchema,
});
export type NotificationPreferencesPut = z.infer<typeof notificationPreferencesPutSchema>;
