// The notification categories and channels: the ONE declaration the api
// function, the client and the docs use. The database keeps constant copies
// for its check constraint (app_private.notification_category_names(),
// required_notification_categories(), notification_channel_names()) and of
// the defaults for push senders (notification_preference_defaults(): the
// categories' defaults and DEFAULT_QUIET_HOURS);
// tests/integration/notifications.test.ts fails when they differ from this file.
//
// Adding a category or changing a default: change it here and in those
// functions (a new migration).
// Old clients keep working: a category missing from a PUT gets its default
// (PUT replaces the whole document, so an old client's save resets the
// user's choice for it; docs/notification-preferences.md).

export const NOTIFICATION_CHANNELS = ["push", "email", "in_app"] as const;
export type NotificationChannel = typeof NOTIFICATION_CHANNELS[number];

export type ChannelSettings = Record<NotificationChannel, boolean>;

export interface NotificationCategoryDeclaration {
  /** A required category cannot be switched off on every channel. */
  required: boolean;
  /** What the user gets before they ever save preferences. */
  defaults: ChannelSettings;
  description: string;
}

export const NOTIFICATION_CATEGORIES = {
  security: {
    required: true,
    defaults: { push: true, email: true, in_app: true },
    description: "New sign-ins, signed-out devices, account changes. Cannot be off on every channel.",
  },
  sync_conflicts: {
    required: false,
    defaults: { push: true, email: false, in_app: true },
    description: "A change made on another device conflicted with one of yours.",
  },
  reminders: {
    required: false,
    defaults: { push: true, email: false, in_app: true },
    description: "Reminders the user set in the app.",
  },
  product_updates: {
    required: false,
    // Opt-in only: nothing promotional by push or email until the user asks.
    defaults: { push: false, email: false, in_app: true },
    description: "News about the app.",
  },
} as const satisfies Record<string, NotificationCategoryDeclaration>;

export type NotificationCategory = keyof typeof NOTIFICATION_CATEGORIES;

export const NOTIFICATION_CATEGORY_NAMES = Object.keys(NOTIFICATION_CATEGORIES) as NotificationCategory[];

export const REQUIRED_NOTIFICATION_CATEGORIES = NOTIFICATION_CATEGORY_NAMES.filter((name) => NOTIFICATION_CATEGORIES[name].required);

export type NotificationCategories = Record<NotificationCategory, ChannelSettings>;

export interface QuietHours {
  enabled: boolean;
  /** HH:MM, 24-hour, local time in `timezone`. */
  start: string;
  end: string;
  /** IANA time zone name. */
  timezone: string;
}

export const DEFAULT_QUIET_HOURS: QuietHours = { enabled: false, start: "22:00", end: "07:00", timezone: "UTC" };

/** Every category with its default channels (a fresh object each call). */
export function defaultNotificationCategories(): NotificationCategories {
  return Object.fromEntries(
    NOTIFICATION_CATEGORY_NAMES.map((name) => [name, { ...NOTIFICATION_CATEGORIES[name].defaults }]),
  ) as NotificationCategories;
}

/** The categories a client sent, completed with the defaults of those it left out. */
export function withDefaultCategories(partial: Partial<NotificationCategories>): NotificationCategories {
  const categories = defaultNotificationCategories();
  for (const name of NOTIFICATION_CATEGORY_NAMES) {
    const sent = partial[name];
    if (sent) categories[name] = { ...sent };
  }
  return categories;
}
