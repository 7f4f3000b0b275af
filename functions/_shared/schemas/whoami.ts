import { z } from "zod";
import { serverTimeSchema } from "./server-time.ts";
import { uuidSchema } from "../uuid.ts";

export const whoamiResponseSchema = z.object({
  user_id: uuidSchema,
  session_id: uuidSchema,
  aal: z.string(),
  is_anonymous: z.boolean(),
  expires_at: z.string().datetime({ offset: true }).describe("when the access token expires"),
  server_time: serverTimeSchema,
});
export type WhoamiResponse = z.infer<typeof whoamiResponseSchema>;
