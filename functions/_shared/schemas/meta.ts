import { z } from "zod";
import { limitsSchema } from "../limits.ts";
import { deprecationSchema } from "./deprecation.ts";

export const metaResponseSchema = z.object({
  api_version: z.literal("1"),
  server_time: z.string().datetime({ offset: true }),
  limits: limitsSchema,
  collections: z.array(z.string()).describe("names of the collections a client may sync"),
  // A default, not required: a client may still talk to a server from before the list existed.
  deprecations: z.array(deprecationSchema).default([]).describe("deprecated routes with their sunset and migration guide (docs/versioning.md)"),
});
export type MetaResponse = z.infer<typeof metaResponseSchema>;
