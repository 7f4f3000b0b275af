// Client compatibility: each client as released (tests/compat/released-clients.json)
// runs a sync scenario against the CURRENT server. A server change that breaks
// a released client fails here; docs/versioning.md says what must happen then.
//
// A release is resolved by the commit sha recorded in the JSON file (the git
// tag, e.g. v0.1.0, is only its convenient name: tags need not survive into a
// CI clone). Its client/ and functions/_shared/ (what the client imports) are
// exported with `git archive` into .cache/ (inside the repo, so its `zod`
// resolves from node_modules), imported, and removed afterwards.
//
// Adding a release: after tagging vX.Y.Z (`git tag -a vX.Y.Z <sha> -m "tidesync X.Y.Z"`),
// add its row `"vX.Y.Z": "<full sha>"` to tests/compat/released-clients.json;
// every row is tested. Drop a row only when its overlap period has ended.
//
// The scenario uses only the collection `lists` with title, color, position
// and archived: the fields every released client knows. A newer server may
// send more fields (created_by, created_at since issue 8); an old client keeps
// them as data, so the checks look only at the fields it writes.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { createTestUser, stack } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";

const exec = promisify(execFile);
const releases = JSON.parse(await readFile(path.join(ROOT, "tests/compat/released-clients.json"), "utf8")) as Record<string, string>;

type ClientModule = typeof import("../../client/index.ts");

const exported: string[] = [];
afterAll(async () => {
  for (const dir of exported) await rm(dir, { recursive: true, force: true });
});

async function releasedClient(name: string, sha: string): Promise<ClientModule> {
  if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`released-clients.json: ${name} must map to a full commit sha`);
  await exec("git", ["cat-file", "-e", `${sha}^{commit}`], { cwd: ROOT }).catch(() => {
    throw new Error(`release ${name} (${sha}) is not in this clone's history; fetch the full history`);
  });
  await mkdir(path.join(ROOT, ".cache"), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, ".cache", `compat-${name}-`));
  exported.push(dir);
  const archive = path.join(dir, "release.tar");
  await exec("git", ["archive", "--format=tar", `--output=${archive}`, sha, "client", "functions/_shared"], { cwd: ROOT });
  await exec("tar", ["-xf", archive, "-C", dir]);
  return await import(path.join(dir, "client/index.ts")) as ClientModule;
}

async function device(client: ClientModule, token: string, installationId: string) {
  const api = new client.TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => token });
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "0.1.0", build_number: 1 } });
  const opened = await client.TidesyncClient.open({ api, storage: new client.MemoryStorage(), installationId, collections: ["lists"] });
  const events: { type: string; fields?: string[] | null }[] = [];
  opened.on((event) => events.push(event as { type: string; fields?: string[] | null }));
  return { sync: opened, events };
}

/**
 * Syncs after every transaction open now has ended: a pull stops below the
 * cluster's oldest open transaction (docs/sync.md), and other test files write
 * in parallel, so without this a pull may not yet deliver the other device's write.
 */
async function synced(d: { sync: { sync(): Promise<{ applied: number; conflicts: number }> } }) {
  await settled();
  return await d.sync.sync();
}

describe.each(Object.entries(releases))("the client released as %s", (name, sha) => {
  it("syncs two devices of one user against the current server: create, edit, pull, same-field conflict and rebase, delete", async () => {
    const client = await releasedClient(name, sha);
    const user = await createTestUser();
    const second = await user.newSession();
    const phone = await device(client, user.token, crypto.randomUUID());
    const tablet = await device(client, second.token, crypto.randomUUID());

    // Create on the phone, pull on the tablet.
    const id = await phone.sync.create("lists", { title: "Groceries", color: "#33aa55", position: 1, archived: false });
    expect((await synced(phone)).applied).toBe(1);
    await synced(tablet);
    expect((await tablet.sync.get("lists", id))?.data).toEqual(expect.objectContaining({ title: "Groceries", color: "#33aa55", position: 1, archived: false }));

    // Edit on the tablet, pull on the phone.
    await tablet.sync.upsert("lists", id, { color: null, archived: true });
    expect((await synced(tablet)).applied).toBe(1);
    await synced(phone);
    expect((await phone.sync.get("lists", id))?.data).toEqual(expect.objectContaining({ title: "Groceries", color: null, position: 1, archived: true }));

    // Both rename it; the phone is first. The tablet's title loses (server wins
    // per field, reported), its other field is rebased onto the new version.
    await phone.sync.upsert("lists", id, { title: "Food" });
    await tablet.sync.upsert("lists", id, { title: "Shopping", position: 2 });
    await synced(phone);
    const tabletReport = await synced(tablet);
    expect(tabletReport.conflicts).toBe(1);
    expect(tablet.events.filter((e) => e.type === "write_discarded").map((e) => e.fields)).toEqual([["title"]]);
    await synced(phone);
    const expected = { title: "Food", color: null, position: 2, archived: true };
    expect((await tablet.sync.get("lists", id))?.data).toEqual(expect.objectContaining(expected));
    expect((await phone.sync.get("lists", id))?.data).toEqual(expect.objectContaining(expected));
    expect([phone.sync.pendingOps().length, tablet.sync.pendingOps().length]).toEqual([0, 0]);

    // Delete on the phone; the tablet sees it gone.
    await phone.sync.delete("lists", id);
    expect((await synced(phone)).applied).toBe(1);
    await synced(tablet);
    expect((await tablet.sync.get("lists", id))?.data ?? null).toBeNull();
    expect((await tablet.sync.list("lists")).map((r) => r.id)).not.toContain(id);
  });
});
