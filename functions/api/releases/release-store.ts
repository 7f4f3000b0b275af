// The database side of test-build distribution. Publishing runs inside
// deps.db.asReleaseManager (a verified webhook); the update check, the Expo
// manifest and feedback inside deps.db.withUser / asAnon, where the policies
// of app_private.releases decide which releases exist for the caller.
import type { Feedback, FeedbackCursor, ManagedFeedbackList, OtaAsset, PublishRelease, Release } from "../../_shared/schemas/releases.ts";
import type { ExpoDeletion, IdRange } from "../../_shared/releases/plan-expo-update.ts";
import type { UpdatePolicy } from "../../_shared/releases/plan-update-check.ts";
import { WEBHOOK_TOLERANCE_SECONDS } from "../../_shared/releases/webhook-signature.ts";
import { WIRE_TIME_FORMAT } from "../sync/wire-time.ts";
import type { Tx } from "../lib/db.ts";

export interface ReleaseRow {
  id: string;
  platform: Release["platform"];
  channel: string;
  kind: Release["kind"];
  version: string;
  build_number: number;
  runtime_version: string | null;
  release_notes: string;
  artifact_path: string | null;
  artifact_url: string | null;
  artifact_sha256: string;
  artifact_size: string;
  artifact_content_type: string;
  assets: OtaAsset[];
  status: Release["status"];
  rollout_percentage: number;
  created_at: Date;
  updated_at: Date;
}

const RELEASE_COLUMNS = `id, platform, channel, kind, version, build_number, runtime_version, release_notes, artifact_path,
  artifact_url, artifact_sha256, artifact_size::text, artifact_content_type, assets, status, rollout_percentage, created_at, updated_at`;

/**
 * A release as CI is answered: with its Expo config, which the update check and the Expo manifest's
 * candidates (up to 100 and 50 rows a request) leave out; the manifest reads the one it serves (expoClientOf).
 */
interface ManagedReleaseRow extends ReleaseRow {
  expo_client: Release["expo_client"];
}
const MANAGED_RELEASE_COLUMNS = `${RELEASE_COLUMNS}, expo_client`;

export function toRelease(row: ManagedReleaseRow): Release {
  return {
    id: row.id,
    platform: row.platform,
    channel: row.channel,
    kind: row.kind,
    version: row.version,
    build_number: row.build_number,
    runtime_version: row.runtime_version,
    release_notes: row.release_notes,
    artifact: {
      path: row.artifact_path,
      url: row.artifact_url,
      sha256: row.artifact_sha256,
      size: Number(row.artifact_size),
      content_type: row.artifact_content_type,
    },
    assets: row.assets,
    status: row.status,
    rollout_percentage: row.rollout_percentage,
    expo_client: row.expo_client,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A write's Standard Webhooks delivery: its webhook-id and the SHA-256 of the request it signed. */
export interface WebhookDelivery {
  id: string;
  requestSha256: string;
}

/**
 * What an earlier delivery with this webhook-id did: the release it made or
 * changed when it was this very request (a retry), "reused" when it was
 * another request, or null for a new delivery.
 */
async function deliveredRelease(tx: Tx, delivery: WebhookDelivery): Promise<ManagedReleaseRow | "reused" | null> {
  // Serializes concurrent deliveries of the same id (a CI retry racing the
  // original): the second waits here and then finds the first one's release.
  await tx`select pg_advisory_xact_lock(hashtextextended(${"tidesync.release_webhook:" + delivery.id}, 0))`;
  const [row] = await tx.unsafe<(ManagedReleaseRow & { request_sha256: string | null })[]>(
    `select ${MANAGED_RELEASE_COLUMNS.split(",").map((c) => `r.${c.trim()}`).join(", ")}, d.request_sha256
     from app_private.release_webhook_deliveries d join app_private.releases r on r.id = d.release_id
     where d.webhook_id = $1`,
    [delivery.id],
  );
  if (!row) return null;
  // A delivery recorded before requests were kept (null) is taken as a retry, as it was then.
  const { request_sha256: recorded, ...release } = row;
  return recorded === null || recorded === delivery.requestSha256 ? release : "reused";
}

async function recordDelivery(tx: Tx, delivery: WebhookDelivery, releaseId: string): Promise<void> {
  await tx`insert into app_private.release_webhook_deliveries (webhook_id, release_id, request_sha256)
           values (${delivery.id}, ${releaseId}, ${delivery.requestSha256})`;
}

/** Whether a signed read with this webhook-id was answered before (a replay). */
export async function webhookReadTaken(tx: Tx, webhookId: string): Promise<boolean> {
  const [row] = await tx<{ taken: boolean }[]>`
    select exists (select 1 from app_private.release_webhook_reads where webhook_id = ${webhookId}) as taken`;
  return row.taken;
}

/**
 * Records the webhook-id of a signed read that answered; false when another
 * took it before (a replay, or the same headers sent at once: the first to
 * commit wins, the others wait here for it). Ids signed more than twice the
 * tolerance ago can never pass the timestamp check again (a margin for the
 * two clocks): they are forgotten.
 */
export async function claimWebhookRead(tx: Tx, webhookId: string, signedAtSeconds: number): Promise<boolean> {
  await tx`delete from app_private.release_webhook_reads
           where signed_at < now() - make_interval(secs => ${2 * WEBHOOK_TOLERANCE_SECONDS})`;
  const claimed = await tx`
    insert into app_private.release_webhook_reads (webhook_id, signed_at) values (${webhookId}, to_timestamp(${signedAtSeconds}))
    on conflict (webhook_id) do nothing
    returning webhook_id`;
  return claimed.length === 1;
}

export type PublishOutcome =
  // updatePolicy: whether the publish's update_policy became the channel's ("kept": a higher build's stays).
  | { kind: "created"; release: Release; updatePolicy?: "set" | "kept" }
  | { kind: "replayed"; release: Release }
  | { kind: "conflict" }
  | { kind: "webhook_id_reused" };

const UNIQUE_VIOLATION = "23505";

/** Publishes a release once per webhook-id (a retried delivery gets the release it made). */
export async function publishRelease(tx: Tx, delivery: WebhookDelivery, release: PublishRelease): Promise<PublishOutcome> {
  const previous = await deliveredRelease(tx, delivery);
  if (previous === "reused") return { kind: "webhook_id_reused" };
  if (previous) return { kind: "replayed", release: toRelease(previous) };
  const artifact = release.artifact;
  let row: ManagedReleaseRow;
  try {
    // In a savepoint: a refused insert leaves the transaction usable.
    [row] = await tx.savepoint((sp) => sp.unsafe<ManagedReleaseRow[]>(
      `insert into app_private.releases (platform, channel, kind, version, build_number, runtime_version, release_notes,
         artifact_path, artifact_url, artifact_sha256, artifact_size, artifact_content_type, assets, status, rollout_percentage,
         expo_client)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::text::jsonb, $14, $15, $16::text::jsonb)
       returning ${MANAGED_RELEASE_COLUMNS}`,
      [
        release.platform, release.channel, release.kind, release.version, release.build_number, release.runtime_version ?? null,
        release.release_notes ?? "", artifact.path ?? null, artifact.url ?? null, artifact.sha256, artifact.size,
        artifact.content_type ?? (release.kind === "ota" ? "application/javascript" : "application/octet-stream"),
        JSON.stringify(release.assets ?? []), release.status ?? "active", release.rollout_percentage ?? 100,
        release.expo_client === undefined ? null : JSON.stringify(release.expo_client),
      ],
    ));
  } catch (error) {
    // Another delivery already published this build number: on this (platform, channel) for a
    // binary, on this (platform, channel, runtime version) for an OTA update (the two unique indexes).
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return { kind: "conflict" };
    throw error;
  }
  // A binary's only (the schema refuses it for an ota update): the minimum is of installed builds.
  // The policy in force is the highest build's: a lower build published later (a hotfix branch, an
  // old CI run re-run) leaves it; the row lock of the conflict orders concurrent publishes.
  let updatePolicy: "set" | "kept" | undefined;
  if (release.update_policy) {
    const set = await tx`
      insert into app_private.release_update_policies (platform, channel, minimum_build_number, below_minimum_level, set_by_build_number)
      values (${release.platform}, ${release.channel}, ${release.update_policy.minimum_build_number},
              ${release.update_policy.below_minimum_level ?? "required"}, ${release.build_number})
      on conflict (channel, platform) do update set
        minimum_build_number = excluded.minimum_build_number,
        below_minimum_level = excluded.below_minimum_level,
        set_by_build_number = excluded.set_by_build_number,
        updated_at = now()
      where release_update_policies.set_by_build_number is null
         or release_update_policies.set_by_build_number <= excluded.set_by_build_number
      returning 1`;
    updatePolicy = set.length === 1 ? "set" : "kept";
  }
  await recordDelivery(tx, delivery, row.id);
  return { kind: "created", release: toRelease(row), updatePolicy };
}

/** Changes status and/or rollout once per webhook-id (a retry changes nothing); null when there is no such release. */
export async function changeRelease(
  tx: Tx,
  delivery: WebhookDelivery,
  releaseId: string,
  change: { status?: Release["status"]; rollout_percentage?: number },
): Promise<{ kind: "changed" | "replayed"; release: Release } | { kind: "webhook_id_reused" } | null> {
  const previous = await deliveredRelease(tx, delivery);
  if (previous === "reused") return { kind: "webhook_id_reused" };
  if (previous) return { kind: "replayed", release: toRelease(previous) };
  const [row] = await tx.unsafe<ManagedReleaseRow[]>(
    `update app_private.releases
     set status = coalesce($2, status), rollout_percentage = coalesce($3, rollout_percentage)
     where id = $1::uuid
     returning ${MANAGED_RELEASE_COLUMNS}`,
    [releaseId, change.status ?? null, change.rollout_percentage ?? null],
  );
  if (!row) return null;
  await recordDelivery(tx, delivery, row.id);
  return { kind: "changed", release: toRelease(row) };
}

/** Every release of (platform, channel, kind) the caller may see (RLS), newest first; at most `limit`. */
export async function visibleReleases(
  tx: Tx,
  filter: { platform: string; channel: string; kind: Release["kind"]; runtimeVersion?: string; aboveBuild?: number },
  limit: number,
): Promise<ReleaseRow[]> {
  return await tx.unsafe<ReleaseRow[]>(
    `select ${RELEASE_COLUMNS}
     from app_private.releases
     where channel = $1 and platform = $2 and kind = $3
       and ($4::text is null or runtime_version = $4)
       and build_number > coalesce($5::int, -1)
     order by build_number desc, created_at desc
     limit $6`,
    [filter.channel, filter.platform, filter.kind, filter.runtimeVersion ?? null, filter.aboveBuild ?? null, limit],
  );
}

/**
 * `column` lies in one of `ranges` (inclusive, uuid order; releaseIdRanges gives at most two), their
 * bounds the parameters from `$firstParam` on (ranges.flat()). Spelt out, not joined to an array, so
 * the planner sees each range's bounds and scans only those of the column's index.
 */
function inIdRanges(column: string, ranges: readonly IdRange[], firstParam: number): string {
  return ranges.map((_, i) => `${column} between $${firstParam + 2 * i}::uuid and $${firstParam + 1 + 2 * i}::uuid`).join(" or ");
}

/** The OTA releases of (platform, channel, runtime version) the caller may see (RLS) whose ids lie in `ranges` (inIdRanges). */
export async function visibleReleasesWithIds(
  tx: Tx,
  key: { platform: string; channel: string; runtimeVersion: string },
  ranges: readonly IdRange[],
): Promise<ReleaseRow[]> {
  if (ranges.length === 0) return [];
  return await tx.unsafe<ReleaseRow[]>(
    `select ${RELEASE_COLUMNS}
     from app_private.releases
     where channel = $1 and platform = $2 and kind = 'ota' and runtime_version = $3 and (${inIdRanges("id", ranges, 4)})`,
    [key.channel, key.platform, key.runtimeVersion, ...ranges.flat()],
  );
}

/**
 * The recorded deletions of OTA updates of (platform, runtime version) whose ids lie in `ranges`
 * (inIdRanges), of any channel the caller may see (RLS): the update a device runs
 * may be one of another channel (an app that switched channel). Read after the releases, in the
 * same transaction: a release deleted since is here.
 */
export async function visibleDeletionsWithIds(
  tx: Tx,
  key: { platform: string; runtimeVersion: string },
  ranges: readonly IdRange[],
): Promise<ExpoDeletion[]> {
  if (ranges.length === 0) return [];
  return await tx.unsafe<ExpoDeletion[]>(
    `select release_id as id, created_at, deleted_at
     from app_private.release_deletions
     where platform = $1 and runtime_version = $2 and (${inIdRanges("release_id", ranges, 3)})`,
    [key.platform, key.runtimeVersion, ...ranges.flat()],
  );
}

/**
 * Whether an OTA update of (platform, runtime version) whose id lies in `ranges` exists, or was
 * deleted, on a channel the caller may not see: app_private.ota_update_hidden answers only that.
 */
export async function hiddenUpdateWithIds(
  tx: Tx,
  key: { platform: string; runtimeVersion: string },
  ranges: readonly IdRange[],
): Promise<boolean> {
  if (ranges.length === 0) return false;
  const bounds = (end: 0 | 1) => ranges.map((_, i) => `$${3 + 2 * i + end}::uuid`).join(", ");
  const [row] = await tx.unsafe<{ hidden: boolean }[]>(
    `select app_private.ota_update_hidden($1, $2, array[${bounds(0)}], array[${bounds(1)}]) as hidden`,
    [key.platform, key.runtimeVersion, ...ranges.flat()],
  );
  return row.hidden;
}

/**
 * The Expo config published with an OTA release (extra.expoClient of its manifest), if the caller
 * may see the release (RLS) and it has one. Read for the one release a manifest serves.
 */
export async function expoClientOf(tx: Tx, releaseId: string): Promise<Release["expo_client"]> {
  const [row] = await tx<{ expo_client: Release["expo_client"] }[]>`
    select expo_client from app_private.releases where id = ${releaseId}::uuid`;
  return row?.expo_client ?? null;
}

/**
 * The latest rollbacks of the OTA updates of (platform, channel, runtime version), if the caller may
 * see the channel (RLS), of every release, not only the newest the manifest weighs: rolledBackAt, of
 * a release still rolled back (its updated_at; releases_ota_build_key's range of the runtime version,
 * each of its updates, as the rolled-back one may be older than the window), and pastRollbackAt,
 * one no release shows any more (made active or paused again, or deleted:
 * app_private.release_past_rollbacks). One statement, so one snapshot: a rollback undone meanwhile
 * is in one of the two. Read after the releases, in the same transaction: so is one undone since.
 */
export async function visibleRollbacks(
  tx: Tx,
  key: { platform: string; channel: string; runtimeVersion: string },
): Promise<{ rolledBackAt: Date | null; pastRollbackAt: Date | null }> {
  const [row] = await tx<{ rolled_back_at: Date | null; past_rollback_at: Date | null }[]>`
    select
      (select max(updated_at) from app_private.releases
        where channel = ${key.channel} and platform = ${key.platform} and kind = 'ota'
          and runtime_version = ${key.runtimeVersion} and status = 'rolled_back') as rolled_back_at,
      (select rolled_back_at from app_private.release_past_rollbacks
        where channel = ${key.channel} and platform = ${key.platform} and runtime_version = ${key.runtimeVersion}) as past_rollback_at`;
  return { rolledBackAt: row.rolled_back_at, pastRollbackAt: row.past_rollback_at };
}

/**
 * The (platform, channel) update policy, if the caller may see the channel and one is set, and the
 * database's time for the answer's server_time, in the one wire format (sync/wire-time.ts): one
 * statement, so server_time costs the check no round trip.
 */
export async function visibleUpdatePolicy(tx: Tx, platform: string, channel: string): Promise<{ policy: UpdatePolicy | null; serverTime: string }> {
  const [row] = await tx<{ minimum_build_number: number | null; below_minimum_level: UpdatePolicy["below_minimum_level"] | null; server_time: string }[]>`
    select p.minimum_build_number, p.below_minimum_level, to_char(now() at time zone 'UTC', ${WIRE_TIME_FORMAT}) as server_time
      from (select) as the_time
      left join app_private.release_update_policies p on p.channel = ${channel} and p.platform = ${platform}`;
  const policy = row.minimum_build_number === null || row.below_minimum_level === null
    ? null
    : { minimum_build_number: row.minimum_build_number, below_minimum_level: row.below_minimum_level };
  return { policy, serverTime: row.server_time };
}

/** The calling session's device (RLS: the caller's own), for rollout and feedback. */
export async function sessionDevice(tx: Tx, sessionId: string) {
  const [row] = await tx<{ id: string; installation_id: string; platform: Release["platform"]; build_number: number }[]>`
    select id, installation_id, platform, build_number from app_private.devices where session_id = ${sessionId}::uuid`;
  return row ?? null;
}

/** Whether the caller may see this release at all (RLS). */
export async function releaseExists(tx: Tx, releaseId: string): Promise<boolean> {
  const [row] = await tx<{ found: boolean }[]>`select exists (select 1 from app_private.releases where id = ${releaseId}::uuid) as found`;
  return row.found;
}

export async function insertFeedback(
  tx: Tx,
  feedback: { releaseId: string; userId: string; deviceId: string | null; platform: string; buildNumber: number; body: string },
): Promise<Feedback> {
  const [row] = await tx<(Omit<Feedback, "created_at"> & { created_at: Date })[]>`
    insert into app_private.release_feedback (release_id, user_id, device_id, platform, build_number, body)
    values (${feedback.releaseId}, ${feedback.userId}, ${feedback.deviceId}, ${feedback.platform}, ${feedback.buildNumber}, ${feedback.body})
    returning id, release_id, device_id, platform, build_number, body, created_at`;
  return { ...row, created_at: row.created_at.toISOString() };
}

/**
 * A page of a release's feedback, as the release manager reads it (every tester's), newest first
 * by (created_at, id), older than `before` when given; null for an unknown release. The cursor
 * is made and compared here, in microseconds: a JS Date holds milliseconds.
 */
export async function listFeedback(
  tx: Tx,
  releaseId: string,
  page: { limit: number; before?: FeedbackCursor },
): Promise<ManagedFeedbackList | null> {
  if (!(await releaseExists(tx, releaseId))) return null;
  const { before } = page;
  const rows = await tx<(Omit<Feedback, "created_at"> & { user_id: string; created_at: Date; cursor: string })[]>`
    select id, release_id, user_id, device_id, platform, build_number, body, created_at,
           (extract(epoch from created_at) * 1000000)::bigint::text || '_' || id::text as cursor
    from app_private.release_feedback
    where release_id = ${releaseId}::uuid
      ${before === undefined ? tx`` : tx`and (created_at, id) < (timestamptz 'epoch' + ${before.createdAtMicros}::bigint * interval '1 microsecond', ${before.id}::uuid)`}
    order by created_at desc, id desc
    limit ${page.limit + 1}`;
  const hasMore = rows.length > page.limit;
  const shown = rows.slice(0, page.limit);
  return {
    feedback: shown.map(({ cursor: _cursor, ...row }) => ({ ...row, created_at: row.created_at.toISOString() })),
    has_more: hasMore,
    next_before: hasMore ? shown[shown.length - 1].cursor : null,
  };
}
