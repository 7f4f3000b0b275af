// POST /v1/auth/session: bind the caller's Supabase session to this device
// and answer the app's start-up state; DELETE /v1/auth/session: sign this
// device out. docs/devices-and-sessions.md tells the lifecycle.
import { createRoute } from "@hono/zod-openapi";
import { sessionStartRequestSchema, sessionStartResponseSchema } from "../../_shared/schemas/session.ts";
import { readDeletion } from "../account/deletion-store.ts";
import { registerDevice, revokeSession } from "../devices/device-store.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { jsonBody, requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { readPreferences } from "../notifications/preference-store.ts";
import { readProfile } from "../profiles/profile-store.ts";

/**
 * DELETE /v1/auth/session ends the very session it carries (db.ts, SessionUse): its admission and
 * its transaction both check the session's standing for this use.
 */
const SIGN_OUT = { use: "sign_out" } as const;

export function registerAuthSessionRoutes(app: App, deps: Deps): void {
  const sessionResponse = { "application/json": { schema: sessionStartResponseSchema.meta({ id: "SessionStart" }) } };

  const startSession = createRoute({
    method: "post",
    path: "/v1/auth/session",
    summary: "Start (or refresh) the app session on this device",
    description: "Idempotent per (user, installation_id): 201 the first time, 200 after, same device id. Binds the token's " +
      "Supabase session to the device (a session this install ran before is signed out), registers or keeps its push token " +
      "(a token registered elsewhere is detached from that device) and returns the start-up state.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "auth.session"), jsonBody(deps)] as const,
    request: {
      body: { required: true, content: { "application/json": { schema: sessionStartRequestSchema.meta({ id: "SessionStartRequest" }) } } },
    },
    responses: {
      201: { description: "First session start of this installation for this user: device created", content: sessionResponse },
      200: { description: "Device already known: refreshed and bound to this session", content: sessionResponse },
      ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
    },
  });

  const endSession = createRoute({
    method: "delete",
    path: "/v1/auth/session",
    summary: "Sign this device out",
    description: "Deletes the caller's Supabase session (its refresh token stops working, this access token is refused from now " +
      "on) and clears the device's push token. The one route a session at aal1 of a user with a verified MFA factor reaches " +
      "(the password step of a sign-in left unfinished), as Supabase Auth's own logout does.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "auth.session", SIGN_OUT)] as const,
    responses: {
      204: { description: "Signed out" },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  app.openapi(startSession, async (c) => {
    const user = c.get("user");
    const { device } = c.req.valid("json");
    const caller = { userId: user.sub, sessionId: user.session_id };
    const state = await deps.db.withUser(user, async (tx) => {
      const registered = await registerDevice(tx, caller, device);
      const profile = await readProfile(tx, user.sub);
      const notifications = await readPreferences(tx, user.sub);
      const deletion = await readDeletion(tx, user.sub);
      return { ...registered, profile, notifications, deletion };
    });
    Object.assign(c.get("logFields"), { device_id: state.device.id, device_created: state.created });
    const body = {
      session: {
        id: user.session_id,
        user_id: user.sub,
        aal: c.get("aal"),
        expires_at: new Date((user.exp ?? 0) * 1000).toISOString(),
      },
      device: state.device,
      user: { id: user.sub, display_name: state.profile.display_name, onboarding: state.profile.onboarding },
      notifications: state.notifications,
      account_deletion: state.deletion,
      // The database's now() of the transaction that bound the session (the device's last_seen_at).
      server_time: state.serverTime,
    };
    return state.created ? c.json(body, 201) : c.json(body, 200);
  });

  app.openapi(endSession, async (c) => {
    const user = c.get("user");
    await deps.db.withUser(user, (tx) => revokeSession(tx, user.session_id), SIGN_OUT);
    return c.body(null, 204);
  });
}
