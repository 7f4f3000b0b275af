// A deprecated route as GET /v1/meta publishes it (docs/versioning.md).
import { z } from "zod";

export const deprecationSchema = z.object({
  route: z.string().regex(/^(GET|POST|PUT|PATCH|DELETE) \/v1\/\S*$/, "must be \"<METHOD> /v1/<path>\", e.g. \"GET /v1/whoami\"")
    .describe("method and path as in the OpenAPI document, e.g. DELETE /v1/devices/{id}"),
  since: z.iso.datetime({ offset: true }).describe("when the route became deprecated (Deprecation header)"),
  sunset: z.iso.datetime({ offset: true }).describe("after this instant the route may stop answering (Sunset header)"),
  link: z.url().describe("the migration guide (Link rel=\"deprecation\")"),
});
export type Deprecation = z.infer<typeof deprecationSchema>;
