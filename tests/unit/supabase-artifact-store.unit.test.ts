// The production artifact store speaks Supabase Storage's HTTP API through
// @supabase/storage-js. Storage cannot run here, so a small server answers
// `POST /storage/v1/object/sign/<bucket>` the way Storage does (a signedURL
// per path, or a per-path error); the store, storage-js and fetch are real.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import { createSupabaseArtifactStore } from "../../functions/api/releases/artifact-store.ts";

interface Seen {
  method?: string;
  url?: string;
  authorization?: string;
  apikey?: string;
  body: unknown;
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function storage(answer: (seen: Seen, res: http.ServerResponse) => void): Promise<{ url: string; requests: Seen[] }> {
  const requests: Seen[] = [];
  server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const seen = { method: req.method, url: req.url, authorization: req.headers.authorization, apikey: req.headers.apikey as string, body: raw ? JSON.parse(raw) : undefined };
      requests.push(seen);
      answer(seen, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, requests };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("the Supabase Storage artifact store (storage-js)", () => {
  it("asks Storage for signed URLs of every path with the service key, and links to what Storage signed", async () => {
    const stub = await storage((seen, res) => {
      const { paths } = seen.body as { paths: string[] };
      json(res, 200, paths.map((path) => ({ error: null, path, signedURL: `/object/sign/test-builds/${path}?token=signed-${path.length}` })));
    });
    const store = createSupabaseArtifactStore({ supabaseUrl: stub.url, serviceRoleKey: "service-key", bucket: "test-builds" });
    const links = await store.signedLinks(["ios/beta/1.ipa", "ota/7/bundle.js"], 3600);
    expect(links.map((l) => l.url)).toEqual([
      `${stub.url}/storage/v1/object/sign/test-builds/ios/beta/1.ipa?token=signed-14`,
      `${stub.url}/storage/v1/object/sign/test-builds/ota/7/bundle.js?token=signed-15`,
    ]);
    expect(Math.abs(links[0].expiresAt.getTime() - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(stub.requests).toEqual([{
      method: "POST",
      url: "/storage/v1/object/sign/test-builds",
      authorization: "Bearer service-key",
      apikey: "service-key",
      body: { expiresIn: 3600, paths: ["ios/beta/1.ipa", "ota/7/bundle.js"] },
    }]);
    expect(await store.signedLinks([], 60)).toEqual([]);
    expect(stub.requests).toHaveLength(1);
  });

  it("a failing Storage is retried once, then 503 UNAVAILABLE (retryable)", async () => {
    const stub = await storage((_seen, res) => json(res, 500, { statusCode: "500", error: "internal", message: "boom" }));
    const store = createSupabaseArtifactStore({ supabaseUrl: stub.url, serviceRoleKey: "k", bucket: "test-builds" });
    const failure = await store.signedLinks(["a.ipa"], 60).catch((error) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ code: "UNAVAILABLE", retryable: true });
    expect(stub.requests).toHaveLength(2);
  });

  it("a Storage that never answers is abandoned at the timeout, twice, then 503", async () => {
    const stub = await storage(() => {});
    const store = createSupabaseArtifactStore({ supabaseUrl: stub.url, serviceRoleKey: "k", bucket: "test-builds", timeoutMs: 200 });
    await expect(store.signedLinks(["a.ipa"], 60)).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(stub.requests).toHaveLength(2);
  });

  it("an object CI named but never uploaded is not retried", async () => {
    const stub = await storage((seen, res) => {
      const { paths } = seen.body as { paths: string[] };
      json(res, 200, paths.map((path) => ({ error: "Either the object does not exist or you do not have access to it", path, signedURL: null })));
    });
    const store = createSupabaseArtifactStore({ supabaseUrl: stub.url, serviceRoleKey: "k", bucket: "test-builds" });
    await expect(store.signedLinks(["missing.ipa"], 60)).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(stub.requests).toHaveLength(1);
  });
});
