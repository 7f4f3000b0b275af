// docs/test-builds.md, "Withdrawing a build": pausing, rolling back or deleting a
// release, or removing a tester from its group, stops new links from being handed
// out; a link already handed out works until it expires (it is Storage's, signed
// for the object, and knows nothing of the release). Deleting the object is what
// stops it: the local store answers such a link 404, as Storage does.
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser } from "../support/harness.ts";
import { binaryRelease, check, freshChannel, publish, removeArtifact, setRelease, testerGroup } from "../support/releases.ts";

describe("withdrawing a build whose download links were handed out", () => {
  it("rolled back, tester removed, release deleted: the old link still downloads; the object deleted: it is 404", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    const group = await testerGroup([channel], [tester.userId]);
    const release = await binaryRelease(channel, 200);
    const { id } = await publish(release);
    const link = (await check(tester.token, { channel, build_number: 100 })).body.update.download;
    expect((await fetch(link.url)).status).toBe(200);

    await setRelease(id, { status: "rolled_back" });
    expect((await check(tester.token, { channel, build_number: 100 })).body.update).toBeNull();
    expect((await fetch(link.url)).status).toBe(200);
    await adminSql`delete from app_private.tester_group_members where group_id = ${group}`;
    expect((await fetch(link.url)).status).toBe(200);
    await adminSql`delete from app_private.releases where id = ${id}`;
    expect((await fetch(link.url)).status).toBe(200);

    await removeArtifact(release.artifact.path!);
    const gone = await fetch(link.url);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ statusCode: "404", error: "not_found", message: "Object not found" });
  });
});
