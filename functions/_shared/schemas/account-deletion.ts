// Account deletion as POST/GET/DELETE /v1/users/me/deletion speak it
// (docs/account-deletion.md): an optional confirmation in, the state out.
import { z } from "zod";
import { serverTimeSchema } from "./server-time.ts";

/**
 * What `confirm` in the body of POST /v1/users/me/deletion must say, exactly, when it is sent.
 * api-v1 fixes the request without a body; a page that has the user type the words sends them,
 * so a typo is refused instead of deleting.
 */
export const DELETION_CONFIRMATION = "delete my account";

export const deletionRequestSchema = z.strictObject({
  confirm: z.literal(DELETION_CONFIRMATION).optional()
    .describe(`optional; when sent, must be exactly "${DELETION_CONFIRMATION}"`),
});
export type DeletionRequest = z.infer<typeof deletionRequestSchema>;

const timestamp = z.string().datetime({ offset: true });

export const deletionStateSchema = z.object({
  status: z.enum(["none", "scheduled"]).describe("scheduled: the account is deleted at scheduled_for unless cancelled (DELETE) before"),
  requested_at: timestamp.nullable(),
  scheduled_for: timestamp.nullable().describe("when the purge may delete the account (it runs every few minutes after)"),
});
export type DeletionState = z.infer<typeof deletionStateSchema>;

export const deletionStateResponseSchema = deletionStateSchema.extend({ server_time: serverTimeSchema });

export const deletionScheduledResponseSchema = z.object({
  status: z.literal("scheduled"),
  requested_at: timestamp,
  scheduled_for: timestamp,
  server_time: serverTimeSchema,
});
