// Seed section: sample test-build distribution (fixtures/sample-releases.json):
// a beta group with Alice, an `everyone` group for production, update
// policies, and releases on beta and production whose artifacts are short
// sample texts. `npm start` writes those texts where the local artifact store
// serves them (sampleArtifacts()), so the download links of the sample work.
// Idempotent: `on conflict do nothing`.
import { createHash } from "node:crypto";
import { z } from "zod";
import { BELOW_MINIMUM_LEVELS, channelNameSchema, RELEASE_KINDS } from "../../functions/_shared/schemas/releases.ts";
import { PLATFORMS } from "../../functions/_shared/schemas/devices.ts";
import { readFixture, sqlLiteral } from "./seed-sql.ts";
import { uuidSchema } from "../../functions/_shared/uuid.ts";

const sampleReleasesSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  tester_groups: z.array(z.object({
    id: uuidSchema,
    name: z.string().includes("sample"),
    everyone: z.boolean(),
    channels: z.array(channelNameSchema),
    members: z.array(uuidSchema),
  })),
  update_policies: z.array(z.object({
    platform: z.enum(PLATFORMS),
    channel: channelNameSchema,
    minimum_build_number: z.number().int().min(0),
    below_minimum_level: z.enum(BELOW_MINIMUM_LEVELS),
  })),
  releases: z.array(z.object({
    id: uuidSchema,
    platform: z.enum(PLATFORMS),
    channel: channelNameSchema,
    kind: z.enum(RELEASE_KINDS),
    version: z.string(),
    build_number: z.number().int().min(0),
    runtime_version: z.string().optional(),
    release_notes: z.string(),
    artifact: z.object({ path: z.string(), content: z.string().includes("SAMPLE"), content_type: z.string().optional() }),
    created_at: z.string().datetime({ offset: true }),
  })),
});

export type SampleReleases = z.infer<typeof sampleReleasesSchema>;

export async function loadSampleReleases(): Promise<SampleReleases> {
  return sampleReleasesSchema.parse(await readFixture("sample-releases.json"));
}

/** The artifact files of the sample releases: object path in the bucket → bytes. */
export async function sampleArtifacts(): Promise<{ path: string; bytes: Buffer }[]> {
  return (await loadSampleReleases()).releases.map((r) => ({ path: r.artifact.path, bytes: Buffer.from(r.artifact.content, "utf8") }));
}

const literal = (value: string | number | boolean | null | undefined) =>
  value === null || value === undefined ? "null" : typeof value === "string" ? sqlLiteral(value) : String(value);

export async function sampleReleasesSql(): Promise<string> {
  const sample = await loadSampleReleases();
  const lines = ["-- Sample test-build distribution: a beta group with Alice, releases on beta and production. SAMPLE DATA."];
  for (const g of sample.tester_groups) {
    lines.push(`insert into app_private.tester_groups (id, name, everyone) values (${literal(g.id)}, ${literal(g.name)}, ${g.everyone}) on conflict do nothing;`);
    for (const channel of g.channels) {
      lines.push(`insert into app_private.tester_group_channels (group_id, channel) values (${literal(g.id)}, ${literal(channel)}) on conflict do nothing;`);
    }
    for (const member of g.members) {
      lines.push(`insert into app_private.tester_group_members (group_id, user_id) values (${literal(g.id)}, ${literal(member)}) on conflict do nothing;`);
    }
  }
  for (const p of sample.update_policies) {
    lines.push(
      `insert into app_private.release_update_policies (platform, channel, minimum_build_number, below_minimum_level) ` +
        `values (${literal(p.platform)}, ${literal(p.channel)}, ${p.minimum_build_number}, ${literal(p.below_minimum_level)}) on conflict do nothing;`,
    );
  }
  for (const r of sample.releases) {
    const bytes = Buffer.from(r.artifact.content, "utf8");
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const contentType = r.artifact.content_type ?? "application/octet-stream";
    lines.push(
      `insert into app_private.releases (id, platform, channel, kind, version, build_number, runtime_version, release_notes, artifact_path, artifact_sha256, artifact_size, artifact_content_type, created_at, updated_at)`,
      `values (${[r.id, r.platform, r.channel, r.kind, r.version, r.build_number, r.runtime_version, r.release_notes, r.artifact.path, sha256, bytes.length, contentType, r.created_at, r.created_at].map(literal).join(", ")})`,
      `on conflict do nothing;`,
    );
  }
  return lines.join("\n");
}
