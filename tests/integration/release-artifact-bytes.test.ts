// docs/test-builds.md, "The model": a published release's metadata never changes, the
// bytes at its artifact path are whatever the bucket holds when the device downloads.
// Storage lets the service key overwrite an object (x-upsert, PUT); the update check
// goes on offering the recorded sha256 and size, so only the downloader's check of the
// sha256 tells a replaced build. Here the local store's file is replaced as Storage
// would replace the object.
import { describe, expect, it } from "vitest";
import { createTestUser } from "../support/harness.ts";
import { binaryRelease, check, freshChannel, publish, putArtifact, sha256Of, testerGroup } from "../support/releases.ts";

describe("the bytes of a published artifact", () => {
  it("replaced in the bucket, are offered under the published sha256, which the download no longer matches", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const release = await binaryRelease(channel, 200);
    await publish(release);
    await putArtifact(release.artifact.path!, "NOT THE BUILD THAT WAS PUBLISHED (replaced after publish)");

    const { download } = (await check(tester.token, { channel, build_number: 100 })).body.update;
    expect([download.sha256, download.size]).toEqual([release.artifact.sha256, release.artifact.size]);
    const bytes = new Uint8Array(await (await fetch(download.url)).arrayBuffer());
    expect(await sha256Of(bytes)).not.toBe(download.sha256);
  });
});
