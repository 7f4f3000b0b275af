import { z } from "zod";
import { serverTimeSchema } from "./server-time.ts";

export const whoamiResponseSchema = z.object({
  user_id: z.uuid(),
  session_id: z.uuid(),
  aal: z.string(),
  is_anonymous: z.boolean(),
  expires_at: z.string().datetime({ offset: true }).describe("when the access token expires"),
  server_time: serverTimeSchema,
});
export type WhoamiResponse = z.infer<typeof whoamiResponseSchema>;
