import { z } from "zod";
import { limitsSchema } from "../limits.ts";
import { deprecationSchema } from "./deprecation.ts";
import { serverTimeSchema } from "./server-time.ts";

export const metaResponseSchema = z.object({
  api_version: z.literal("1"),
  server_time: serverTimeSchema,
  limits: limitsSchema,
  collections: z.array(z.string()).describe("names of the collections a client may sync"),
  collection_schemas: z.record(z.string(), z.object({
    scope: z.string().describe("the column holding the row's scope (the list it belongs to); \"id\" for a scope collection"),
    fields: z.record(z.string(), z.object({
      type: z.string().describe("Postgres type of the column"),
      base_type: z.string().optional()
        .describe("a column of a domain (or an array of one): the type the domain is over, through domains over domains; its values are those of this type"),
      category: z.string().length(1).optional()
        .describe("the Postgres category of the column's values (pg_type.typcategory of the type, a domain's base type's, an array's element type's: S string, N numeric, B boolean, D date/time, T interval, E enum, U user-defined, I network address, G geometric, R range, V bit string, C composite, …). A type the push has no schema of its own for (citext, inet, ltree, int4range, …) takes a JSON string, its text form, and a composite (C) a JSON object; absent from servers older than it"),
      nullable: z.boolean(),
      has_default: z.boolean().describe("the database fills it when a create leaves it out"),
      filled_by_trigger: z.boolean().optional()
        .describe("a NOT NULL column without a default that a BEFORE INSERT trigger of the table may fill: a create may leave it out; if it stays null the op is rejected (required)"),
      insertable: z.boolean().describe("a create may set it"),
      updatable: z.boolean().describe("a change may set it"),
      min_length: z.number().int().optional(),
      max_length: z.number().int().optional(),
      pattern: z.string().optional()
        .describe("a regular expression the text must match, in a subset that means the same in Postgres and JavaScript (compile it with the u flag); a column's other patterns are checked by the database only"),
      enum_values: z.array(z.string()).optional()
        .describe("an enum column (or an array of one): the values it accepts, in the enum's order"),
    })),
  })).describe("per collection: its scope column and every field (the table's columns but id), as the database declares them"),
  // Defaults, not required: a client may still talk to a server from before these existed.
  rate_limits: z.record(z.string(), z.object({
    limit: z.number().int().positive(),
    window_seconds: z.number().int().positive(),
    per: z.enum(["user", "session"]).describe("user: one budget for all the user's sessions; session: each signed-in device has its own"),
    // Optional: absent where the rule has no ceiling, and from servers older than it.
    user_limit: z.number().int().positive().optional()
      .describe("per session only: a ceiling on the user's total across all their sessions, in the same window; over it → 429 RATE_LIMITED for every session of the user until the window resets. Absent: no ceiling (each session has only its own budget)"),
  })).default({}).describe("request budgets per operation (sync.pull: GET /v1/sync/changes and GET /v1/sync/records/{collection}/{id}, sync.batch: POST /v1/sync/batch, …); over one → 429 RATE_LIMITED with Retry-After"),
  deprecations: z.array(deprecationSchema).default([]).describe("deprecated routes with their sunset and migration guide (docs/versioning.md)"),
  // Optional: servers from before test-build distribution do not send it.
  releases: z.object({
    download_link_ttl_seconds: z.number().int().positive().describe("how long a download link of GET /v1/releases/check works"),
    webhook_tolerance_seconds: z.number().int().positive().describe("how far a CI request's webhook-timestamp may be from the server's clock"),
    expo_updates_url_path: z.string().describe("the Expo Updates manifest endpoint, relative to the api function (set updates.url to it)"),
    expo_code_signing: z.object({ keyid: z.string(), alg: z.literal("rsa-v1_5-sha256") }).nullable()
      .describe("what to put in an Expo app's updates.codeSigningMetadata; null when the server does not sign"),
    // Optional: servers from before the cap do not send it.
    max_feedback_per_user_and_release: z.number().int().positive().optional()
      .describe("feedback one user may send on one release (POST /v1/releases/{id}/feedback), the database's cap; past it 403 FORBIDDEN"),
  }).optional().describe("test-build distribution (docs/test-builds.md)"),
});
export type MetaResponse = z.infer<typeof metaResponseSchema>;
