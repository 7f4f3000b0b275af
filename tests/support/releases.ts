// Helpers of the test-build tests: CI requests signed with the reference
// Standard Webhooks implementation (the `standardwebhooks` npm package), tester
// groups set up as a release manager would, artifacts put where the local
// artifact store serves them, and fresh channel names so test files never see
// each other's releases.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { requestLine } from "../../functions/_shared/releases/webhook-signature.ts";
import type { PublishRelease } from "../../functions/_shared/schemas/releases.ts";
import { DEFAULT_ARTIFACT_BUCKET } from "../../functions/api/releases/release-config.ts";
import { adminSql, call, createTestUser, type ApiResponse } from "./harness.ts";
import { stack } from "./harness.ts";

export const WEBHOOK_SECRET = stack.functionsEnv.TIDESYNC_RELEASES_WEBHOOK_SECRET;

/** A channel name no other test uses. */
export function freshChannel(prefix = "beta"): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

export interface SignedCall {
  method?: "POST" | "PATCH" | "GET" | "HEAD";
  /** Defaults to a new id per call. */
  webhookId?: string;
  /** When the request is signed (default now). */
  timestamp?: Date;
  /** Secret to sign with (default the server's). */
  secret?: string;
  /** Replace or drop headers after signing. */
  headers?: Record<string, string | undefined>;
  /**
   * What is signed: this request (default: requestLine(method, path) and the
   * body, as docs/test-builds.md tells CI), the body alone (CI clients of
   * POST /v1/releases from before requests were bound in), or another
   * request's method and target (a signature made for something else).
   */
  signs?: "body" | { method: string; target: string };
  /** Another functions server (default the suite's). */
  baseUrl?: string;
  /** The body's text as sent, instead of JSON.stringify(body): for what JSON.stringify cannot write (`1e-400`). */
  rawBody?: string;
}

/** Sends `body` to `path` (from /v1/, with its query) signed as CI would, with standardwebhooks' Webhook.sign. */
export async function signedCall(path: string, body: unknown, options: SignedCall = {}): Promise<ApiResponse> {
  const method = options.method ?? "POST";
  // A read (GET, HEAD) has no body.
  const read = method === "GET" || method === "HEAD";
  const rawBody = read ? "" : options.rawBody ?? JSON.stringify(body);
  const signs = options.signs ?? { method, target: path };
  const payload = signs === "body" ? rawBody : requestLine(signs.method, signs.target) + rawBody;
  const id = options.webhookId ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? new Date();
  const signature = new Webhook(options.secret ?? WEBHOOK_SECRET).sign(id, timestamp, payload);
  const headers: Record<string, string> = {
    ...(read ? {} : { "content-type": "application/json" }),
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": signature,
  };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return await call(path, { method, rawBody: read ? undefined : rawBody, headers, baseUrl: options.baseUrl });
}

export function sha256Of(bytes: Uint8Array): Promise<string> {
  return crypto.subtle.digest("SHA-256", bytes as BufferSource).then((d) => Buffer.from(d).toString("hex"));
}

/** Writes an artifact where the local artifact store serves it; returns its bucket path, hash and size. */
export async function putArtifact(objectPath: string, content: string | Uint8Array) {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const file = path.join(stack.functionsEnv.TIDESYNC_LOCAL_STORAGE_DIR, DEFAULT_ARTIFACT_BUCKET, objectPath);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
  return { path: objectPath, sha256: await sha256Of(bytes), size: bytes.byteLength };
}

/** Deletes an artifact from the local store, as Storage's delete (`remove([path])`) does from the bucket. */
export async function removeArtifact(objectPath: string): Promise<void> {
  await rm(path.join(stack.functionsEnv.TIDESYNC_LOCAL_STORAGE_DIR, DEFAULT_ARTIFACT_BUCKET, objectPath));
}

/** A binary release body for `channel`, its artifact written to the local store. */
export async function binaryRelease(channel: string, buildNumber: number, overrides: Partial<PublishRelease> = {}): Promise<PublishRelease> {
  const artifact = await putArtifact(`ios/${channel}/${buildNumber}.ipa`, `ipa ${channel} ${buildNumber} ${randomUUID()}`);
  return {
    platform: "ios",
    channel,
    kind: "binary",
    version: `1.${buildNumber}.0`,
    build_number: buildNumber,
    release_notes: `Build ${buildNumber}`,
    artifact,
    ...overrides,
  };
}

/** Publishes (signed) and returns the release; fails the test on anything but 201. */
export async function publish(release: PublishRelease): Promise<{ id: string; created_at: string }> {
  const response = await signedCall("/v1/releases", release);
  if (response.status !== 201) throw new Error(`publish answered ${response.status}: ${response.text}`);
  return response.body;
}

export async function setRelease(id: string, change: { status?: string; rollout_percentage?: number }) {
  const response = await signedCall(`/v1/releases/${id}`, change, { method: "PATCH" });
  if (response.status !== 200) throw new Error(`PATCH answered ${response.status}: ${response.text}`);
  return response.body;
}

/** A release on a fresh channel with one tester's feedback `text` (what the release manager reads); its id. */
export async function releaseWithFeedback(text: string): Promise<string> {
  const tester = await createTestUser();
  const channel = freshChannel();
  await testerGroup([channel], [tester.userId]);
  const { id } = await publish(await binaryRelease(channel, 200));
  const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: text, platform: "ios", build_number: 200 } });
  if (sent.status !== 201) throw new Error(`feedback answered ${sent.status}: ${sent.text}`);
  return id;
}

/** A tester group granted `channels`, with `members` (user ids), as the release manager sets it up. */
export async function testerGroup(channels: string[], members: string[], options: { everyone?: boolean } = {}): Promise<string> {
  const [group] = await adminSql<{ id: string }[]>`
    insert into app_private.tester_groups (name, everyone) values (${`group ${randomUUID()}`}, ${options.everyone ?? false}) returning id`;
  for (const channel of channels) await adminSql`insert into app_private.tester_group_channels (group_id, channel) values (${group.id}, ${channel})`;
  for (const userId of members) await adminSql`insert into app_private.tester_group_members (group_id, user_id) values (${group.id}, ${userId})`;
  return group.id;
}

/** What the database holds for a channel (to prove a refused request wrote nothing). */
export async function releaseCount(channel: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select count(*)::int as n from app_private.releases where channel = ${channel}`;
  return row.n;
}

export async function check(token: string, query: { platform?: string; channel: string; build_number: number }) {
  const params = new URLSearchParams({ platform: query.platform ?? "ios", channel: query.channel, build_number: String(query.build_number) });
  return await call(`/v1/releases/check?${params}`, { token });
}
