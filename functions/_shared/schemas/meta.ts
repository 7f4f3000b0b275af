import { z } from "zod";
import { limitsSchema } from "../limits.ts";

export const metaResponseSchema = z.object({
  api_version: z.literal("1"),
  server_time: z.string().datetime({ offset: true }),
  limits: limitsSchema,
  collections: z.array(z.string()).describe("names of the collections a client may sync"),
  collection_schemas: z.record(z.string(), z.object({
    scope: z.string().describe("the column holding the row's scope (the list it belongs to); \"id\" for a scope collection"),
    fields: z.record(z.string(), z.object({
      type: z.string().describe("Postgres type of the column"),
      nullable: z.boolean(),
      has_default: z.boolean().describe("the database fills it when a create leaves it out"),
      insertable: z.boolean().describe("a create may set it"),
      updatable: z.boolean().describe("a change may set it"),
      min_length: z.number().int().optional(),
      max_length: z.number().int().optional(),
      pattern: z.string().optional(),
    })),
  })).describe("per collection: its scope column and every field (the table's columns but id), as the database declares them"),
});
export type MetaResponse = z.infer<typeof metaResponseSchema>;
