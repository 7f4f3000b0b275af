// GET and PUT /v1/users/me/notifications: one preference document per user.
// Categories and channels come from ../notification-categories.ts (the one
// declaration); see docs/notification-preferences.md.
import { z } from "zod";
import { digitsParam } from "./digits.ts";
import { isIanaTimeZone, TIME_ZONE_MAX_LENGTH, TIME_ZONE_SHAPE } from "../locale-and-time-zone.ts";
import { serverTimeSchema } from "./server-time.ts";
import {
  NOTIFICATION_CATEGORIES,
  NOTIFICATION_CATEGORY_NAMES,
  type NotificationCategory,
  REQUIRED_NOTIFICATION_CATEGORIES,
} from "../notification-categories.ts";
import { uuidSchema } from "../uuid.ts";

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

/** The one time zone rule of what quiet hours and devices take (functions/_shared/locale-and-time-zone.ts). */
export const timeZoneSchema = z.string().refine(isIanaTimeZone, {
  message: "must be an IANA time zone name spelled as in the tz database (case matters), e.g. Europe/Paris",
  params: { code: "unknown_timezone" },
});

/**
 * A time zone in an answer: the shape the database stores, not the reader's
 * Intl data, which may lack a zone the server took (an older ICU, "Factory").
 */
export const storedTimeZoneSchema = z.string().max(TIME_ZONE_MAX_LENGTH).regex(TIME_ZONE_SHAPE);

/**
 * Answers take fields this code does not know (a newer server's channel,
 * category or quiet-hours setting) and keep them, so an app built on an older
 * client reads a newer server's document and can send it back whole; requests
 * stay strict (an unknown field there is a typo).
 */
type ObjectMode = typeof z.strictObject | typeof z.looseObject;

const answeredChannelSettingsSchema = z.looseObject(channelSettingsSchema.shape);

function quietHoursWith(timezone: z.ZodType<string>, object: ObjectMode) {
  return object({
    enabled: z.boolean(),
    start: clockTimeSchema.describe("local time the quiet hours begin (HH:MM); may be after `end` to span midnight"),
    end: clockTimeSchema.describe("local time the quiet hours end (HH:MM)"),
    timezone: timezone.describe("IANA time zone of start and end"),
  }).superRefine((value, ctx) => {
    if (value.enabled && value.start === value.end) {
      ctx.addIssue({ code: "custom", path: ["end"], message: "must differ from start while quiet hours are enabled", params: { code: "empty_window" } });
    }
  });
}

/** Quiet hours as a PUT sends them. */
export const quietHoursSchema = quietHoursWith(timeZoneSchema, z.strictObject);
export type QuietHoursBody = z.infer<typeof quietHoursSchema>;
/** Quiet hours as stored and answered. */
const storedQuietHoursSchema = quietHoursWith(storedTimeZoneSchema, z.looseObject);

/**
 * Categories in a PUT: only declared ones (others are unexpected fields); a
 * left-out category gets its default, not its stored value (api-v1: PUT
 * replaces the whole document).
 */
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
  .describe("per category the channels; categories left out get their defaults, not their stored values (send back every " +
    "category you read). Declared categories: " +
    NOTIFICATION_CATEGORY_NAMES.map((n) => `${n}${NOTIFICATION_CATEGORIES[n].required ? " (required)" : ""}`).join(", "));

/** The document as GET and PUT answer it (ETag = `"<version>"`). */
export const notificationPreferencesSchema = z.object({
  version: z.number().int().min(0).describe("0 = the defaults (never saved); +1 on every change"),
  updated_at: z.string().datetime({ offset: true }).nullable().describe("last change; null for the defaults"),
  categories: z.looseObject(categoriesShape(answeredChannelSettingsSchema)),
  quiet_hours: storedQuietHoursSchema,
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

/**
 * A query-string whole number in [min, max] (max at most MAX_SAFE_INTEGER).
 * The digits make it whole, so no .int(): zod's would add its own safe-integer
 * bound, a second detail for one value.
 */
const wholeNumberParam = (min: number, max: number) =>
  digitsParam(18).transform(Number).pipe(z.number().min(min).max(max));

export const NOTIFICATION_HISTORY_MAX_LIMIT = 100;

/** GET /v1/users/me/notifications/history: newest first, keyset pages by entry id. */
export const notificationHistoryQuerySchema = z.strictObject({
  limit: wholeNumberParam(1, NOTIFICATION_HISTORY_MAX_LIMIT).optional().transform((value) => value ?? 50)
    .describe(`entries per page, 1..${NOTIFICATION_HISTORY_MAX_LIMIT}; default 50`),
  before: wholeNumberParam(1, Number.MAX_SAFE_INTEGER).optional()
    .describe("only entries older than this entry id (the previous page's next_before)"),
});

/** The document part of an audit entry: what the user chose, without version/updated_at. */
const auditedDocumentSchema = notificationPreferencesSchema.pick({ categories: true, quiet_hours: true });

export const notificationHistoryEntrySchema = z.object({
  id: z.number().int().positive(),
  changed_at: z.string().datetime({ offset: true }),
  device_id: uuidSchema.nullable().describe("the device whose session made the change; null when none was registered"),
  old_version: z.number().int().nullable().describe("null for the first save (the defaults were in force)"),
  new_version: z.number().int(),
  old: auditedDocumentSchema.nullable(),
  new: auditedDocumentSchema,
});

export const notificationHistoryResponseSchema = z.object({
  entries: z.array(notificationHistoryEntrySchema),
  has_more: z.boolean(),
  next_before: z.number().int().nullable().describe("pass as `before` for the next (older) page; null on the last page"),
  server_time: serverTimeSchema,
});
export type NotificationHistoryResponse = z.infer<typeof notificationHistoryResponseSchema>;
