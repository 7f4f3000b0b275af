import { z } from "zod";
import { limitsSchema } from "../limits.ts";

export const metaResponseSchema = z.object({
  api_version: z.literal("1"),
  server_time: z.string().datetime({ offset: true }),
  limits: limitsSchema,
  collections: z.array(z.string()).describe("names of the collections a client may sync"),
});
export type MetaResponse = z.infer<typeof metaResponseSchema>;
