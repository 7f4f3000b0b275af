// docs/openapi.json: the OpenAPI 3.1 document the `api` function serves at
// GET /v1/openapi.json, built in Node from the same app and zod schemas.
import { createApp, OPENAPI_INFO } from "../../functions/api/app.ts";
import { loadConfig } from "../../functions/api/lib/config.ts";
import { openApiDocument } from "../../functions/api/lib/openapi-helpers.ts";

/** Placeholder settings: building the router needs a Config, never a connection (postgres.js connects lazily). */
const DOCUMENT_ONLY_ENV = {
  SUPABASE_DB_URL: "postgres://openapi-generation@127.0.0.1:9/none",
  SUPABASE_JWT_SECRET: "openapi-generation-only-not-a-secret",
  TIDESYNC_CURSOR_SECRET: "openapi-generation-only-not-a-secret",
};

export async function generateOpenApi(): Promise<string> {
  const { app, deps } = createApp(loadConfig(DOCUMENT_ONLY_ENV));
  try {
    return JSON.stringify(openApiDocument(app, OPENAPI_INFO), null, 2) + "\n";
  } finally {
    await deps.db.close();
  }
}
