// The database side of devices and sessions. Runs inside deps.db.withUser: as
// role `authenticated` with the verified claims, so the policies of
// app_private.devices decide which rows a statement sees and may write; the
// triggers keep the lifecycle (revoked_at, push token release) and
// app_private.revoke_session() is the one narrow way to delete a Supabase
// session (docs/devices-and-sessions.md).
import type { Device, DeviceRegistration } from "../../_shared/schemas/devices.ts";
import type { Tx } from "../lib/db.ts";
import { wireNow } from "../sync/wire-time.ts";

interface DeviceRow {
  id: string;
  installation_id: string;
  platform: Device["platform"];
  app_version: string;
  build_number: number;
  os_version: string | null;
  model: string | null;
  locale: string | null;
  timezone: string | null;
  push_provider: Device["push_provider"];
  has_push_token: boolean;
  push_token_updated_at: Date | null;
  last_seen_at: Date;
  created_at: Date;
  revoked_at: Date | null;
  session_id: string | null;
  /** app_private.session_is_live() of the bound session: false once it expired or its user was banned or deleted, or while it is the password step (aal1) of an MFA user's sign-in. */
  live: boolean;
}

/** The columns of a device `d` as the API answers it; `live` by the database's one rule of a session that counts. */
const DEVICE_COLUMNS = `
  d.id, d.installation_id, d.platform, d.app_version, d.build_number, d.os_version, d.model, d.locale, d.timezone,
  d.push_provider, d.push_token is not null as has_push_token, d.push_token_updated_at, d.last_seen_at,
  d.created_at, d.revoked_at, d.session_id, app_private.session_is_live(d.session_id, d.user_id) as live`;

/**
 * GET /v1/devices lists every active device (the calling one among them, so
 * each signed-in device can be found and signed out) and at most this many
 * of the others, most recently seen first.
 */
export const MAX_LISTED_INACTIVE_DEVICES = 100;

/**
 * `tokens`: "in use" (GET /v1/devices): a session that no longer counts gets
 * no pushes (app_private.push_targets), so its token shows as none; "stored"
 * (the export): whether a token is kept, which for such a session is only
 * until the sweep releases it (app_private.release_expired_push_tokens).
 */
function toDevice(row: DeviceRow, currentSessionId: string, tokens: "in use" | "stored"): Device & { session_id?: string | null } {
  const shownToken = tokens === "stored" || row.live;
  const device: Device = {
    id: row.id,
    installation_id: row.installation_id,
    platform: row.platform,
    app_version: row.app_version,
    build_number: row.build_number,
    os_version: row.os_version,
    model: row.model,
    locale: row.locale,
    timezone: row.timezone,
    push_provider: shownToken ? row.push_provider : null,
    has_push_token: shownToken && row.has_push_token,
    push_token_updated_at: row.push_token_updated_at?.toISOString() ?? null,
    last_seen_at: row.last_seen_at.toISOString(),
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    active: row.live,
    current: row.session_id !== null && row.session_id === currentSessionId,
  };
  // The export also names the session a device is signed in with (the caller's own, no token).
  return tokens === "stored" ? { ...device, session_id: row.session_id } : device;
}

/**
 * Registers (or refreshes) the caller's device for `installationId` and binds
 * the caller's session to it. `created` is true when this (user,
 * installation) had no device before (→ 201). `serverTime`: the transaction's
 * now() (the device's new last_seen_at) in the wire format, the session start's server_time.
 */
export async function registerDevice(
  tx: Tx,
  caller: { userId: string; sessionId: string },
  device: DeviceRegistration,
): Promise<{ device: Device; created: boolean; serverTime: string }> {
  // One user's registrations run in turn (20261126001300), so the unbind
  // below sees a concurrent start's device of this session instead of
  // failing on devices_session_id_key after it; a start storing a push
  // token holds the locks of that token and of the user's tokens
  // (20261126001900), so two users registering one token run in turn instead
  // of deadlocking; and it holds the user's row, its own session's and the
  // one this installation ran before (20261126002600), which a sign-out locks
  // before the device's row, so a sign-out at the same moment waits for it or
  // it for the sign-out, never both. Starts on one installation run in turn
  // and hold the locks of the other users' tokens there, which the start
  // clears below (20261128001300). First: no device row is locked while
  // waiting (docs/devices-and-sessions.md, "Lock order").
  await tx`select app_private.lock_device_registration(${caller.userId}, ${device.push_token ?? null}, ${device.installation_id}::uuid)`;

  // A session runs on one install. The same session on another installation
  // id (iOS keeps the keychain across a reinstall) moves the binding: the old
  // device loses its session, so the trigger revokes it and drops its token.
  await tx`
    update app_private.devices
    set session_id = null
    where user_id = ${caller.userId}
      and session_id = ${caller.sessionId}
      and installation_id <> ${device.installation_id}`;

  // The session this install ran before (a new sign-in on the same install).
  const [previous] = await tx<{ session_id: string | null }[]>`
    select session_id from app_private.devices
    where user_id = ${caller.userId} and installation_id = ${device.installation_id}
    for update`;

  // push_token left out = keep the registered one; null = remove it.
  const keepToken = device.push_token === undefined;
  const [row] = await tx<(DeviceRow & { created: boolean; server_time: string })[]>`
    insert into app_private.devices as d (
      user_id, installation_id, platform, app_version, build_number, os_version, model, locale, timezone,
      push_token, push_provider, session_id, last_seen_at)
    values (
      ${caller.userId}, ${device.installation_id}, ${device.platform}, ${device.app_version}, ${device.build_number},
      ${device.os_version ?? null}, ${device.model ?? null}, ${device.locale ?? null}, ${device.timezone ?? null},
      ${device.push_token ?? null}, ${device.push_provider ?? null}, ${caller.sessionId}, now())
    on conflict (user_id, installation_id) do update set
      platform = excluded.platform,
      app_version = excluded.app_version,
      build_number = excluded.build_number,
      os_version = excluded.os_version,
      model = excluded.model,
      locale = excluded.locale,
      timezone = excluded.timezone,
      push_token = case when ${keepToken} then d.push_token else excluded.push_token end,
      push_provider = case when ${keepToken} then d.push_provider else excluded.push_provider end,
      session_id = excluded.session_id,
      last_seen_at = excluded.last_seen_at
    returning
      ${tx.unsafe(DEVICE_COLUMNS)},
      (d.xmax = 0) as created,
      ${wireNow(tx)} as server_time`;
  // The phone runs this user's session now: no other user's pushes reach it,
  // whether or not this start sent a token (docs/devices-and-sessions.md,
  // "Shared phones and push tokens").
  await tx`select app_private.release_installation_push_tokens(${device.installation_id}::uuid)`;
  // An install runs one session: the one it ran before is signed out, so no
  // refresh token lives on that nobody can see or revoke from GET /v1/devices.
  if (previous?.session_id && previous.session_id !== caller.sessionId) await revokeSession(tx, previous.session_id);
  const { created, server_time: serverTime, ...deviceRow } = row;
  return { device: toDevice(deviceRow, caller.sessionId, "in use"), created, serverTime };
}

/**
 * The caller's devices (RLS), active first (a session that counts), then most
 * recently seen: every active one and at most `inactiveLimit` of the others;
 * `inactiveLimit` null = all of them and `tokens` "stored" (the export).
 */
export async function listDevices(
  tx: Tx,
  caller: { userId: string; sessionId: string },
  inactiveLimit: number | null = MAX_LISTED_INACTIVE_DEVICES,
  tokens: "in use" | "stored" = "in use",
): Promise<Device[]> {
  const rows = await tx<DeviceRow[]>`
    select * from (
      select mine.*, row_number() over (partition by mine.live order by mine.last_seen_at desc, mine.id) as nth
      from (select ${tx.unsafe(DEVICE_COLUMNS)} from app_private.devices d where d.user_id = ${caller.userId}) mine
    ) listed
    where live or ${inactiveLimit}::integer is null or nth <= ${inactiveLimit}::integer
    order by live desc, last_seen_at desc, id`;
  return rows.map((row) => toDevice(row, caller.sessionId, tokens));
}

/**
 * Deletes one of the caller's Supabase sessions (its refresh tokens cascade;
 * the bound device is revoked and loses its push token in this transaction).
 * False when the session was already gone.
 */
export async function revokeSession(tx: Tx, sessionId: string): Promise<boolean> {
  const [row] = await tx<{ revoked: boolean }[]>`select app_private.revoke_session(${sessionId}::uuid) as revoked`;
  return row.revoked;
}

/**
 * Signs one of the caller's devices out: revokes its bound session, if it
 * still has one. `found` is false when the caller has no such device:
 * another user's device is invisible under RLS, exactly like an unknown id.
 */
export async function signOutDevice(tx: Tx, deviceId: string): Promise<{ found: boolean }> {
  const [device] = await tx<{ session_id: string | null }[]>`
    select session_id from app_private.devices where id = ${deviceId}::uuid`;
  if (!device) return { found: false };
  if (device.session_id !== null) await revokeSession(tx, device.session_id);
  return { found: true };
}
