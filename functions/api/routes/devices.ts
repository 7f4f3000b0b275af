// GET /v1/devices: the caller's devices; DELETE /v1/devices/{id}: sign one
// out remotely. Another user's device id answers exactly like an unknown one
// (RLS hides it). docs/devices-and-sessions.md tells the lifecycle.
import { createRoute } from "@hono/zod-openapi";
import { ApiError } from "../../_shared/errors.ts";
import { deviceIdParamsSchema, deviceListSchema } from "../../_shared/schemas/devices.ts";
import { listDevices, signOutDevice } from "../devices/device-store.ts";
import type { App, Deps } from "../lib/app-env.ts";
import { requireUser } from "../lib/middleware.ts";
import { AUTHENTICATED_ERRORS, bearerSecurity, errorResponses } from "../lib/openapi-helpers.ts";
import { isUuid } from "../../_shared/uuid.ts";


function noSuchDevice(): ApiError {
  return new ApiError("NOT_FOUND", "no such device");
}

export function registerDevicesRoutes(app: App, deps: Deps): void {
  const getDevices = createRoute({
    method: "get",
    path: "/v1/devices",
    summary: "List the caller's devices",
    description: "Every active device, however many (`current: true` on the calling one), then the 100 most recently seen of the others " +
      "(signed out, or their session no longer counts).",
    security: bearerSecurity,
    middleware: [requireUser(deps, "devices")] as const,
    responses: {
      200: { description: "The caller's devices", content: { "application/json": { schema: deviceListSchema.meta({ id: "DeviceList" }) } } },
      ...errorResponses(...AUTHENTICATED_ERRORS),
    },
  });

  const deleteDevice = createRoute({
    method: "delete",
    path: "/v1/devices/{id}",
    summary: "Sign a device out remotely",
    description: "Deletes the device's Supabase session (its refresh and access tokens stop working) and clears its push token. " +
      "The device stays listed as signed out; deleting it again is a no-op 204. An unknown id, a malformed one or another " +
      "user's device → 404, identical in every case.",
    security: bearerSecurity,
    middleware: [requireUser(deps, "devices")] as const,
    request: { params: deviceIdParamsSchema },
    responses: {
      204: { description: "Signed out" },
      ...errorResponses(...AUTHENTICATED_ERRORS, "NOT_FOUND"),
    },
  });

  app.openapi(getDevices, async (c) => {
    const user = c.get("user");
    const devices = await deps.db.withUser(user, (tx) => listDevices(tx, { userId: user.sub, sessionId: user.session_id }));
    Object.assign(c.get("logFields"), { devices: devices.length });
    return c.json({ devices }, 200);
  });

  app.openapi(deleteDevice, async (c) => {
    const user = c.get("user");
    const { id } = c.req.valid("param");
    // A malformed id names no device: the same 404 as an unknown one.
    if (!isUuid(id)) throw noSuchDevice();
    const { found } = await deps.db.withUser(user, (tx) => signOutDevice(tx, id));
    if (!found) throw noSuchDevice();
    Object.assign(c.get("logFields"), { device_id: id });
    return c.body(null, 204);
  });
}
