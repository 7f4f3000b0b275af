// README's account of the sample (fixtures/sample-releases.json): "iOS and Android builds on both
// channels and an OTA update", and its quick start asks whether there is a newer iOS beta build
// than Alice's 140 (there is: 150). A fixture edit that drops one fails here, not in a reader's shell.
import { expect, it } from "vitest";
import { loadSampleReleases } from "../../scripts/seed/sample-releases.ts";

it("has an iOS and an Android build on each channel a sample group receives, and an OTA update", async () => {
  const sample = await loadSampleReleases();
  const channels = [...new Set(sample.tester_groups.flatMap((group) => group.channels))].sort();
  expect(channels).toEqual(["beta", "production"]);
  const builds = sample.releases.filter((release) => release.kind === "binary");
  for (const platform of ["ios", "android"]) {
    for (const channel of channels) {
      expect(builds.some((b) => b.platform === platform && b.channel === channel), `${platform} build on ${channel}`).toBe(true);
    }
  }
  expect(sample.releases.some((release) => release.kind === "ota")).toBe(true);
});

it("offers Alice, on iOS beta build 140, the newer build 150 (README's quick start)", async () => {
  const sample = await loadSampleReleases();
  const newest = Math.max(...sample.releases.filter((r) => r.kind === "binary" && r.platform === "ios" && r.channel === "beta").map((r) => r.build_number));
  expect(newest).toBe(150);
});
