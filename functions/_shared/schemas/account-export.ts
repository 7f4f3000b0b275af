// GET /v1/users/me/export: one JSON document with everything tidesync holds
// about the caller (docs/account-export.md tells every section and what "the
// caller's rows" means per synced table). Versioned: a change that removes
// or renames a field raises EXPORT_VERSION; added sections keep it.
import { z } from "zod";
import { deletionStateSchema } from "./account-deletion.ts";
import { notificationPreferencesSchema } from "./notifications.ts";
import { uuidSchema } from "../uuid.ts";

export const EXPORT_VERSION = 1;

const timestamp = z.string().describe("ISO 8601 timestamp");
const row = z.record(z.string(), z.unknown());

export const accountExportSchema = z.object({
  export_version: z.literal(EXPORT_VERSION),
  generated_at: timestamp,
  account: z.object({
    id: uuidSchema,
    email: z.string().nullable(),
    phone: z.string().nullable(),
    created_at: timestamp.nullable(),
    email_confirmed_at: timestamp.nullable(),
    last_sign_in_at: timestamp.nullable(),
    is_anonymous: z.boolean(),
    user_metadata: z.record(z.string(), z.unknown()).nullable()
      .describe("what the app stored with supabase.auth.updateUser({ data }) (auth.users.raw_user_meta_data)"),
    app_metadata: z.record(z.string(), z.unknown()).nullable()
      .describe("what Supabase Auth and the app's admins keep about the account: provider, providers, claims an admin set (auth.users.raw_app_meta_data)"),
    phone_confirmed_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
    banned_until: timestamp.nullable().describe("when an operator's ban of the account ends or ended (null: never banned)"),
  }).describe("what Supabase Auth holds (no password hash, no tokens)"),
  profile: row.nullable().describe("public.profiles: display name and onboarding"),
  devices: z.array(row).describe("the caller's devices (push tokens are not included: has_push_token says whether one is registered)"),
  sessions: z.array(row).describe("metadata of the live Supabase sessions: id, created/updated/refreshed, aal, factor_id, not_after, user agent, IP (no tokens)"),
  identities: z.array(row)
    .describe("the caller's sign-in identities, oldest first: provider, provider_id, identity_data, created/updated/last sign-in (no tokens)"),
  mfa_factors: z.array(row)
    .describe("the caller's MFA factors, oldest first: id, friendly_name, factor_type, status, created/updated/last challenged, web_authn_aaguid (never the secret)"),
  storage_objects: z.array(row)
    .describe("metadata of the Storage objects the caller owns, oldest first: bucket, name, size, mime type, times, the object's user_metadata (not the content)"),
  storage_buckets: z.array(row)
    .describe("metadata of the Storage buckets the caller owns, oldest first: id, name, public, file_size_limit, allowed_mime_types, times"),
  notification_preferences: notificationPreferencesSchema,
  notification_preference_history: z.array(row).describe("the audit trail of preference changes, oldest first: the newest 1,000 (the trail keeps no more)"),
  list_memberships: z.array(row).describe("the lists the caller belongs to: list id, title, role, joined_at"),
  list_invites: z.array(row).describe("invites the caller created, also to lists they no longer own: list, role, created, expires, used (never the codes, nor who used them)"),
  accepted_list_invites: z.array(row).describe("invites the caller used to join a list, oldest first: id, list_id, role, used_at (not who created them)"),
  sync_op_results: z.array(row).describe("results of the caller's recent sync operations (kept for retention_days)"),
  sync_usage: z.object({
    live_records: z.number().int()
      .describe("the live synced rows counted against the caller's quota (max_live_records_per_user: a push past it is QUOTA_EXCEEDED)"),
  }).nullable().describe("the caller's sync quota usage (app_private.sync_usage); null before their first synced row"),
  sync_access: z.array(z.object({
    scope_id: uuidSchema.describe("a list (scope) the caller gained or lost; their personal list's id is their user id"),
    granted: z.boolean().describe("true: the caller is a member since changed_at; false: they lost it then"),
    changed_at: timestamp,
  })).describe("the caller's latest access change per list, oldest first: when they gained or lost each list (app_private.sync_access); a loss is kept retention_days"),
  tester_group_memberships: z.array(row)
    .describe("the tester groups the caller is in: group_id, added_at (a group's name and channels are the release manager's settings)"),
  release_feedback: z.array(row).describe("feedback the caller sent on test builds, oldest first: release, device, platform, build, text"),
  account_deletion: deletionStateSchema.extend({
    last_attempt_at: timestamp.nullable().describe("when the purge last began an attempt at deleting the account (null: never)"),
  }),
  synced: z.record(z.string(), z.array(row))
    .describe("per synced collection, the rows that are the caller's (docs/account-export.md): each row's columns as stored"),
  complete: z.literal(true).describe("the last member: a document without it was cut off"),
});
export type AccountExport = z.infer<typeof accountExportSchema>;
