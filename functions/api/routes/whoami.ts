// GET /v1/whoami: the verified identity behind a token, after the session
// liveness check. Lets a client test its token, and shows every auth rule.
import { createRoute } from "@hono/zod-openapi";
import { whoamiResponseSchema } from "../../_shared/schemas/whoami.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { requireUser } from "../lib/middleware.ts";
import { wireTimeSql } from "../sync/wire-time.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";

export function registerWhoamiRoutes(app: App, deps: Deps): void {
  const getWhoami = createRoute({
    method: "get",
    path: "/v1/whoami",
    summary: "The caller's verified identity and session (additive to api-v1)",
    security: bearerSecurity,
    middleware: [requireUser(deps, "auth.session")] as const,
    responses: {
      200: { description: "The caller", content: { "application/json": { schema: whoamiResponseSchema.meta({ id: "Whoami" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  app.openapi(getWhoami, async (c) => {
    const user = c.get("user");
    // The transaction checks that the Supabase session still exists, and reads which account of
    // this id the caller is (an account deleted and created again with it is another one).
    const accountCreatedAt = await deps.db.withUser(user, async (tx) => {
      const [row] = await tx.unsafe<{ created_at: string | null }[]>(`select ${wireTimeSql("app_private.account_created_at()")} as created_at`);
      return row?.created_at ?? null;
    });
    return c.json({
      user_id: user.sub,
      session_id: user.session_id,
      aal: c.get("aal"),
      is_anonymous: user.is_anonymous === true,
      expires_at: new Date((user.exp ?? 0) * 1000).toISOString(),
      ...(accountCreatedAt === null ? {} : { account_created_at: accountCreatedAt }),
      // The database's clock, read by the admission statement (requireUser).
      server_time: c.get("serverTime"),
    }, 200);
  });
}
