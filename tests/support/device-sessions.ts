// Helpers for the device/session tests: a device as a phone would report it,
// session start, and what the database holds about a session.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { DeviceRegistration } from "../../functions/_shared/schemas/devices.ts";
import { sessionStartResponseSchema } from "../../functions/_shared/schemas/session.ts";
import { adminSql, call } from "./harness.ts";

export function phone(overrides: Partial<DeviceRegistration> = {}): DeviceRegistration {
  return {
    installation_id: randomUUID(),
    platform: "ios",
    app_version: "1.4.0",
    build_number: 140,
    os_version: "18.1",
    model: "iPhone15,2",
    locale: "en-GB",
    timezone: "Europe/London",
    ...overrides,
  };
}

export function pushToken(): string {
  return `test-apns-${randomUUID()}`;
}

/** POST /v1/auth/session; asserts 200/201 and the response schema. */
export async function startSession(token: string, device: DeviceRegistration) {
  const response = await call("/v1/auth/session", { method: "POST", token, body: { device } });
  expect([200, 201], response.text).toContain(response.status);
  return { status: response.status, body: sessionStartResponseSchema.parse(response.body) };
}

/** A refresh token row for the session, as Supabase Auth keeps one per session. */
export async function addRefreshToken(userId: string, sessionId: string): Promise<void> {
  await adminSql`
    insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id)
    values ('00000000-0000-0000-0000-000000000000', ${randomUUID()}, ${userId}, false, now(), now(), ${sessionId})`;
}

export async function sessionState(sessionId: string): Promise<{ sessions: number; refreshTokens: number }> {
  const [row] = await adminSql<{ sessions: number; refresh_tokens: number }[]>`
    select
      (select count(*)::int from auth.sessions where id = ${sessionId}) as sessions,
      (select count(*)::int from auth.refresh_tokens where session_id = ${sessionId}) as refresh_tokens`;
  return { sessions: row.sessions, refreshTokens: row.refresh_tokens };
}

export async function deviceRow(deviceId: string) {
  const [row] = await adminSql<{ push_token: string | null; push_provider: string | null; session_id: string | null; revoked_at: Date | null; user_id: string }[]>`
    select push_token, push_provider, session_id, revoked_at, user_id from app_private.devices where id = ${deviceId}`;
  return row;
}

/** An error body without its per-request id, to compare two answers. */
export function withoutRequestId(body: { error: Record<string, unknown> }) {
  const { request_id: _ignored, ...rest } = body.error;
  return rest;
}
