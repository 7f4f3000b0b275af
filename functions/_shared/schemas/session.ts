// POST /v1/auth/session: bind the caller's Supabase session to this device
// and get the app's start-up state. DELETE /v1/auth/session takes no body.
import { z } from "zod";
import { deletionStateSchema } from "./account-deletion.ts";
import { deviceRegistrationSchema, deviceSchema } from "./devices.ts";
import { notificationPreferencesSchema } from "./notifications.ts";
import { onboardingSchema } from "./profile.ts";
import { serverTimeSchema } from "./server-time.ts";
import { uuidSchema } from "../uuid.ts";

/** What `aal` means wherever it is answered (here and GET /v1/whoami). */
export const sessionAalDescription = "authenticator assurance level of the session now (aal1, aal2): its auth.sessions.aal, " +
  "raised by mfa.verify and lowered when the factor that raised it is unenrolled, not the token's aal claim";

export const sessionStartRequestSchema = z.strictObject({
  device: deviceRegistrationSchema,
});
export type SessionStartRequest = z.infer<typeof sessionStartRequestSchema>;

export const sessionStartResponseSchema = z.object({
  session: z.object({
    id: uuidSchema.describe("the Supabase Auth session id (the token's session_id claim)"),
    user_id: uuidSchema,
    aal: z.string().describe(sessionAalDescription),
    expires_at: z.string().datetime({ offset: true }).describe("when the access token expires; refresh it with supabase-js before"),
  }),
  device: deviceSchema,
  user: z.object({
    id: uuidSchema,
    display_name: z.string().nullable(),
    onboarding: onboardingSchema,
  }),
  notifications: notificationPreferencesSchema,
  // Optional: servers from before account deletion existed leave it out.
  account_deletion: deletionStateSchema.optional()
    .describe("whether the account is scheduled for deletion: a sign-in during the grace period shows it and offers to cancel"),
  server_time: serverTimeSchema,
});
export type SessionStartResponse = z.infer<typeof sessionStartResponseSchema>;
