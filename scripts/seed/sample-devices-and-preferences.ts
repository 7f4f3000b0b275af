// Seed section: sample devices (fixtures/sample-devices.json) and notification
// preferences (fixtures/sample-notification-preferences.json) of the sample
// users. Runs after the sample users, whose profiles the signup trigger
// creates. Idempotent: `on conflict do nothing` (a device whose sample session
// was meanwhile bound elsewhere is skipped, and no second audit row appears,
// since the audit trigger fires only on a real insert).
import { z } from "zod";
import { withDefaultCategories } from "../../functions/_shared/notification-categories.ts";
import { deviceRegistrationSchema } from "../../functions/_shared/schemas/devices.ts";
import { categoriesInputSchema, quietHoursSchema } from "../../functions/_shared/schemas/notifications.ts";
import { readFixture, sqlLiteral } from "./seed-sql.ts";
import { uuidSchema } from "../../functions/_shared/uuid.ts";

const timestamp = z.string().datetime({ offset: true });

const sampleDevicesSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  devices: z.array(
    deviceRegistrationSchema.safeExtend({
      id: uuidSchema,
      user_id: uuidSchema,
      session_id: uuidSchema.nullable(),
      created_at: timestamp,
      last_seen_at: timestamp,
      revoked_at: timestamp.nullable(),
    }).refine((d) => (d.session_id === null) === (d.revoked_at !== null), {
      message: "a sample device is revoked exactly when it has no session",
    }),
  ),
});

const samplePreferencesSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  preferences: z.array(z.object({
    user_id: uuidSchema,
    categories: categoriesInputSchema,
    quiet_hours: quietHoursSchema,
    updated_at: timestamp,
  })),
});

function literal(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "null";
  return typeof value === "number" ? String(value) : sqlLiteral(value);
}

export async function sampleDevicesAndPreferencesSql(): Promise<string> {
  const { devices } = sampleDevicesSchema.parse(await readFixture("sample-devices.json"));
  const { preferences } = samplePreferencesSchema.parse(await readFixture("sample-notification-preferences.json"));
  const lines = ["-- Sample devices and notification preferences. SAMPLE DATA: fake devices, fake push tokens."];
  for (const d of devices) {
    const tokenAt = d.push_token ? d.last_seen_at : null;
    lines.push(
      `insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, os_version, model, locale, timezone, push_token, push_provider, push_token_updated_at, session_id, last_seen_at, created_at, updated_at, revoked_at)`,
      `values (${[d.id, d.user_id, d.installation_id, d.platform, d.app_version, d.build_number, d.os_version, d.model, d.locale, d.timezone,
        d.push_token, d.push_provider, tokenAt, d.session_id, d.last_seen_at, d.created_at, d.revoked_at ?? d.last_seen_at, d.revoked_at].map(literal).join(", ")})`,
      `on conflict do nothing;`,
    );
  }
  for (const p of preferences) {
    const categories = withDefaultCategories(p.categories);
    const q = p.quiet_hours;
    lines.push(
      `insert into app_private.notification_preferences (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone, created_at, updated_at)`,
      `values (${literal(p.user_id)}, ${sqlLiteral(JSON.stringify(categories))}::jsonb, ${q.enabled}, ${literal(q.start)}, ${literal(q.end)}, ${literal(q.timezone)}, ${literal(p.updated_at)}, ${literal(p.updated_at)})`,
      `on conflict (user_id) do nothing;`,
    );
  }
  return lines.join("\n");
}
