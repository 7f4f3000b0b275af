import { z } from "zod";
import { serverTimeSchema } from "./server-time.ts";
import { sessionAalDescription } from "./session.ts";
import { uuidSchema } from "../uuid.ts";

export const whoamiResponseSchema = z.object({
  user_id: uuidSchema,
  session_id: uuidSchema,
  aal: z.string().describe(sessionAalDescription),
  is_anonymous: z.boolean(),
  expires_at: z.string().datetime({ offset: true }).describe("when the access token expires"),
  account_created_at: z.string().datetime({ offset: true }).optional().describe(
    "when the caller's account was created (auth.users.created_at, microseconds): tells it from an earlier account with the same id (deleted, then created again); a client's store is bound to it (client/store-owner.ts). Absent from servers before it",
  ),
  server_time: serverTimeSchema,
});
export type WhoamiResponse = z.infer<typeof whoamiResponseSchema>;
