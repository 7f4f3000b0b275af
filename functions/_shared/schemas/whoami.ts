import { z } from "zod";

export const whoamiResponseSchema = z.object({
  user_id: z.uuid(),
  session_id: z.uuid(),
  aal: z.string(),
  is_anonymous: z.boolean(),
  expires_at: z.string().datetime({ offset: true }).describe("when the access token expires"),
  server_time: z.string().datetime({ offset: true }),
});
export type WhoamiResponse = z.infer<typeof whoamiResponseSchema>;
