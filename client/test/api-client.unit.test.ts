// TidesyncApi: URLs, headers and token, response validation, and how every
// kind of failure becomes a typed error with code, status, retryability,
// Retry-After, details and request id.
import { describe, expect, it } from "vitest";
import { TidesyncApi } from "../api-client.ts";
import { TidesyncApiError, TidesyncNetworkError, TidesyncResponseError } from "../api-error.ts";
import { BASE_URL, envelope, FakeServer, json } from "./fake-server.ts";

function api(server: FakeServer, token: string | null = "tok-1", timeoutMs?: number) {
  return new TidesyncApi({ baseUrl: `${BASE_URL}/`, getAccessToken: async () => token, fetch: server.fetch, timeoutMs, headers: { apikey: "pk" } });
}

const PREFS = {
  version: 3,
  updated_at: "2026-11-22T00:00:00Z",
  categories: {
    security: { push: true, email: true, in_app: true },
    sync_conflicts: { push: false, email: false, in_app: true },
    reminders: { push: true, email: false, in_app: true },
    product_updates: { push: false, email: false, in_app: false },
  },
  quiet_hours: { enabled: false, start: "22:00", end: "07:00", timezone: "UTC" },
};

describe("TidesyncApi", () => {
  it("sends the token, the extra headers and a JSON body; validates the answer", async () => {
    const server = new FakeServer();
    const response = await api(server).syncBatch({ device_id: "11111111-1111-4111-8111-111111111111", ops: [{ op_id: "00000000-0000-4000-8000-000000000001", collection: "tasks", record_id: "00000000-0000-4000-8000-000000000002", type: "upsert", base_version: null, data: { title: "x" } }] });
    expect(response.results[0]).toMatchObject({ status: "applied", record: { version: 1 } });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", path: "/v1/sync/batch" });
    expect(request.headers.get("authorization")).toBe("Bearer tok-1");
    expect(request.headers.get("apikey")).toBe("pk");
    expect(request.headers.get("content-type")).toBe("application/json");
  });

  it("sends no Authorization header when there is no session, and none for meta", async () => {
    const server = new FakeServer();
    server.script = () => json(200, { api_version: "1", server_time: "2026-11-22T00:00:00Z", limits: { max_body_bytes: 1, max_ops_per_batch: 1, max_record_data_bytes: 1, default_pull_limit: 1, max_pull_limit: 1, max_collections_per_pull: 1, max_live_records_per_user: 1, retention_days: 1 }, collections: ["tasks"], collection_schemas: {} });
    await api(server).meta();
    await expect(api(server, null).whoami()).rejects.toBeInstanceOf(TidesyncResponseError);
    expect(server.requests.map((r) => r.headers.get("authorization"))).toEqual([null, null]);
  });

  it("puts pull parameters in the query", async () => {
    const server = new FakeServer();
    await api(server).syncChanges({ cursor: "abc", limit: 50, collections: ["tasks", "lists"] });
    expect(Object.fromEntries(server.requests[0].query)).toEqual({ cursor: "abc", limit: "50", collections: "tasks,lists" });
  });

  it("turns the error envelope into TidesyncApiError with every field", async () => {
    const server = new FakeServer();
    server.script = () => envelope(503, "UNAVAILABLE", { "retry-after": "2" }, { details: [{ field: "/x", code: "c", message: "m" }] });
    const error = await api(server).syncChanges().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TidesyncApiError);
    expect(error).toMatchObject({ code: "UNAVAILABLE", status: 503, retryable: true, retryAfter: 2, requestId: "req-fake-0001", details: [{ field: "/x", code: "c", message: "m" }] });
  });

  it("turns a non-envelope error page into a retryable TidesyncResponseError for 5xx, not for 4xx", async () => {
    const server = new FakeServer();
    server.script = (_r, call) => new Response(call === 0 ? "<html>Bad gateway</html>" : "{}", { status: call === 0 ? 502 : 404 });
    await expect(api(server).syncChanges()).rejects.toMatchObject({ code: "BAD_RESPONSE", status: 502, retryable: true });
    await expect(api(server).syncChanges()).rejects.toMatchObject({ code: "BAD_RESPONSE", status: 404, retryable: false });
  });

  it("refuses a 200 whose body breaks the contract", async () => {
    const server = new FakeServer();
    server.script = () => json(200, { changes: "nope" });
    await expect(api(server).syncChanges()).rejects.toMatchObject({ code: "BAD_RESPONSE", retryable: false });
  });

  it("reports an unreachable server and a timeout as retryable network errors", async () => {
    const server = new FakeServer();
    server.script = () => {
      throw new TypeError("fetch failed");
    };
    await expect(api(server).syncChanges()).rejects.toMatchObject({ code: "NETWORK", retryable: true });
    const hanging = new TidesyncApi({
      baseUrl: BASE_URL,
      getAccessToken: () => "t",
      timeoutMs: 20,
      fetch: (_input, init) => new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))),
    });
    const error = await hanging.syncChanges().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TidesyncNetworkError);
    expect(error).toMatchObject({ code: "TIMEOUT" });
  });

  it("notification preferences: ETag out, If-Match in (quoted version), 412 typed", async () => {
    const server = new FakeServer();
    server.script = (request) => {
      if (request.method === "GET") return json(200, PREFS, { etag: '"3"' });
      if (request.headers.get("if-match") !== '"3"') return envelope(412, "PRECONDITION_FAILED");
      return json(200, { ...PREFS, version: 4 }, { etag: '"4"' });
    };
    const client = api(server);
    const { preferences, etag } = await client.getNotificationPreferences();
    expect(etag).toBe('"3"');
    const { version: _v, updated_at: _u, ...document } = preferences;
    expect((await client.putNotificationPreferences(document, { ifMatch: preferences.version })).etag).toBe('"4"');
    await expect(client.putNotificationPreferences(document, { ifMatch: 2 })).rejects.toMatchObject({ code: "PRECONDITION_FAILED", status: 412 });
  });

  it("session and devices: 201 vs 200, 204 without a body, ids escaped", async () => {
    const server = new FakeServer();
    server.script = (request) => (request.method === "DELETE" ? new Response(null, { status: 204 }) : envelope(404, "NOT_FOUND"));
    const client = api(server);
    await client.endSession();
    await client.deleteDevice("a/b");
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /v1/auth/session", "DELETE /v1/devices/a%2Fb"]);
    server.script = () => envelope(404, "NOT_FOUND");
    await expect(client.deleteDevice("x")).rejects.toMatchObject({ code: "NOT_FOUND", status: 404, retryable: false });
  });

  it("account deletion: the fixed confirmation goes out, 202 and the state come back validated, cancel is 204", async () => {
    const server = new FakeServer();
    const scheduled = { status: "scheduled", requested_at: "2026-11-22T00:00:00Z", scheduled_for: "2026-11-29T00:00:00Z", server_time: "2026-11-22T00:00:00Z" };
    server.script = (request) =>
      request.method === "DELETE" ? new Response(null, { status: 204 }) : json(request.method === "POST" ? 202 : 200, scheduled);
    const client = api(server);
    expect(await client.requestAccountDeletion()).toEqual(scheduled);
    expect(await client.getAccountDeletion()).toEqual(scheduled);
    await client.cancelAccountDeletion();
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      ["POST /v1/users/me/deletion", "GET /v1/users/me/deletion", "DELETE /v1/users/me/deletion"],
    );
    expect(server.requests[0].body).toEqual({ confirm: "delete my account" });
    server.script = () => json(202, { status: "scheduled" });
    await expect(client.requestAccountDeletion()).rejects.toBeInstanceOf(TidesyncResponseError);
  });

  it("account export: a document that is not a complete export is refused", async () => {
    const server = new FakeServer();
    server.script = () => json(200, { export_version: 1, generated_at: "2026-11-22T00:00:00Z" });
    await expect(api(server).exportAccount()).rejects.toBeInstanceOf(TidesyncResponseError);
  });
});
