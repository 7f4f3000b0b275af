// A scripted stand-in for the API, for the client's UNIT tests only (the
// convergence suite and tests/integration/client-sharing.test.ts run the
// client against real Deno + Postgres). It keeps one user's records with the
// shared merge function and an op ledger, parses batches with the shared
// request schema (ids lower-cased as the server does), publishes the shared
// collection schemas on GET /v1/meta, and lets each test script deviations
// (errors, lost answers, rejections, removals) per request. No permissions and
// no column validation: tests that need a FORBIDDEN or NOT_FOUND script it.
import { collectionNames, collectionSchemas } from "../../functions/_shared/collections.ts";
import { DEFAULT_LIMITS, type Limits } from "../../functions/_shared/limits.ts";
import { mergeOp, type ServerRecord } from "../../functions/_shared/merge.ts";
import type { MetaResponse } from "../../functions/_shared/schemas/meta.ts";
import { RECORD_NOT_FOUND_DETAIL, type SyncBatchRequest, syncBatchRequestSchema, type SyncOpResult, type SyncRecord } from "../../functions/_shared/schemas/sync.ts";
import type { FetchFunction } from "../api-client.ts";
import { tokenSession, tokenSubject } from "../token-subject.ts";

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: unknown;
}

/** A scripted answer: a Response, or undefined to let the fake server answer normally. */
export type Script = (request: FakeRequest, call: number) => Response | undefined | Promise<Response | undefined>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "x-request-id": "req-fake-0001", ...headers } });
}

export function envelope(status: number, code: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): Response {
  const retryable = status === 429 || status >= 500;
  return json(status, { error: { code, message: `scripted ${code}`, retryable, request_id: "req-fake-0001", ...extra } }, headers);
}

/** The session GET /v1/whoami names (the fake's tokens carry none). */
const FAKE_SESSION = "00000000-0000-4000-8000-000000005e55";

export const BASE_URL = "https://fake.tidesync.test/functions/v1/api";

export class FakeServer {
  readonly records = new Map<string, ServerRecord>();
  readonly ledger = new Map<string, SyncOpResult>();
  readonly requests: FakeRequest[] = [];
  seq = 0;
  private calls = 0;
  script: Script | null = null;
  /** What GET /v1/meta answers about the limits (tests may replace it). */
  limits: Limits = DEFAULT_LIMITS;
  /** What GET /v1/meta answers about the collections (tests may replace it). */
  schema: Pick<MetaResponse, "collections" | "collection_schemas"> = { collections: collectionNames(), collection_schemas: collectionSchemas() };
  /** Whether it serves GET /v1/sync/records (false: a server from before that route). */
  recordReads = true;
  /** What GET /v1/whoami answers as the account's creation time (a test replaces it to create the account again). */
  accountCreatedAt = "2026-01-01T00:00:00.000000Z";

  /** The fetch to give the client. */
  readonly fetch: FetchFunction = async (input, init) => {
    const url = new URL(input);
    const request: FakeRequest = {
      method: init.method ?? "GET",
      path: url.pathname.replace(new URL(BASE_URL).pathname, ""),
      query: url.searchParams,
      headers: new Headers(init.headers),
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
    };
    this.requests.push(request);
    const scripted = this.script ? await this.script(request, this.calls++) : undefined;
    if (scripted) return scripted;
    return this.answer(request);
  };

  /** Runs `act` (the app doing something) while the first request to `path` is on the wire; every request is then answered normally. */
  duringFirst(path: string, act: () => Promise<unknown>): void {
    let acted = false;
    this.script = async (request) => {
      if (request.path === path && !acted) {
        acted = true;
        await act();
      }
      return undefined;
    };
  }

  /** Bodies of every batch request so far. */
  batches(): SyncBatchRequest[] {
    return this.requests.filter((r) => r.path === "/v1/sync/batch").map((r) => r.body as SyncBatchRequest);
  }

  /** Writes a record as another device would (a foreign write). */
  write(collection: string, id: string, op: { type: "upsert" | "delete"; data?: Record<string, unknown> }, deviceId = "00000000-0000-4000-8000-00000000ffff"): SyncRecord {
    const key = `${collection}/${id}`;
    const current = this.records.get(key) ?? null;
    const merged = mergeOp(current, { ...op, base_version: current?.version ?? null }, { collection, id, deviceId, seq: ++this.seq, now: new Date().toISOString(), batchFloor: Number.POSITIVE_INFINITY });
    if (merged.outcome !== "applied") throw new Error("foreign write conflicted");
    this.records.set(key, merged.next);
    return toWire(merged.next);
  }

  answer(request: FakeRequest): Response {
    if (request.path === "/v1/meta" && request.method === "GET") {
      return json(200, { api_version: "1", server_time: new Date().toISOString(), limits: this.limits, ...this.schema });
    }
    if (request.path === "/v1/whoami" && request.method === "GET") {
      const token = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      const sub = tokenSubject(token);
      if (sub === null) return envelope(401, "UNAUTHORIZED");
      const expires = new Date(Date.now() + 3_600_000).toISOString();
      return json(200, { user_id: sub, session_id: tokenSession(token) ?? FAKE_SESSION, aal: "aal1", is_anonymous: false, expires_at: expires, account_created_at: this.accountCreatedAt, server_time: new Date().toISOString() });
    }
    if (request.path === "/v1/sync/batch" && request.method === "POST") return json(200, this.applyBatch(syncBatchRequestSchema.parse(request.body)));
    if (request.path === "/v1/sync/changes" && request.method === "GET") return json(200, this.changes(request.query));
    const read = /^\/v1\/sync\/records\/([^/]+)\/([^/]+)$/.exec(request.path);
    if (read && request.method === "GET" && this.recordReads) {
      const record = this.records.get(`${read[1]}/${decodeURIComponent(read[2]).toLowerCase()}`);
      return record ? json(200, toWire(record)) : envelope(404, "NOT_FOUND", {}, { details: [RECORD_NOT_FOUND_DETAIL] });
    }
    return envelope(404, "NOT_FOUND");
  }

  applyBatch(batch: SyncBatchRequest): { results: SyncOpResult[]; server_time: string } {
    const batchFloor = this.seq;
    const results = batch.ops.map((op): SyncOpResult => {
      const earlier = this.ledger.get(op.op_id);
      const key = `${op.collection}/${op.record_id}`;
      if (earlier) {
        // The original outcome, with the record as it is NOW (like the real ledger).
        const { record: _then, ...original } = earlier;
        const now = this.records.get(key);
        const originalVersion = earlier.status === "applied" && _then ? { original_version: _then.version } : {};
        return { ...original, status: "duplicate", original_status: earlier.status as "applied" | "conflict" | "rejected", ...originalVersion, ...(now ? { record: toWire(now) } : {}) };
      }
      const current = this.records.get(key) ?? null;
      const merged = mergeOp(current, op, { collection: op.collection, id: op.record_id, deviceId: batch.device_id ?? null, seq: this.seq + 1, now: new Date().toISOString(), batchFloor });
      let result: SyncOpResult;
      if (merged.outcome === "applied") {
        if (merged.written) {
          this.seq++;
          this.records.set(key, merged.next);
        }
        result = { op_id: op.op_id, status: "applied", record: toWire(merged.next) };
      } else {
        result = { op_id: op.op_id, status: "conflict", record: toWire(merged.current), conflicting_fields: merged.fields };
      }
      this.ledger.set(op.op_id, result);
      return result;
    });
    return { results, server_time: new Date().toISOString() };
  }

  /** Cursor = the last seq delivered, as a plain number (the real one is opaque and signed). */
  changes(query: URLSearchParams): { changes: SyncRecord[]; cursor: string; has_more: boolean; reset: boolean; server_time: string } {
    const after = Number(query.get("cursor") ?? "0");
    const limit = Number(query.get("limit") ?? "500");
    const all = [...this.records.values()]
      .filter((r) => r.version > after && (query.has("cursor") || !r.deleted))
      .sort((a, b) => a.version - b.version);
    const page = all.slice(0, limit);
    const last = page.at(-1)?.version ?? (query.has("cursor") ? after : this.seq);
    return { changes: page.map(toWire), cursor: String(page.length < all.length ? last : Math.max(last, query.has("cursor") ? after : this.seq)), has_more: page.length < all.length, reset: !query.has("cursor"), server_time: new Date().toISOString() };
  }
}

export function toWire(record: ServerRecord): SyncRecord {
  return { collection: record.collection, id: record.id, version: record.version, deleted: record.deleted, data: record.data, updated_at: record.updated_at };
}

/** Deterministic uuids for readable tests: 00000000-0000-4000-8000-<n>. */
export function idSequence(prefix = 0): () => string {
  let n = 0;
  return () => `${String(prefix).padStart(8, "0")}-0000-4000-8000-${String(++n).padStart(12, "0")}`;
}

export const INSTALLATION_ID = "11111111-1111-4111-8111-111111111111";

/** The list the tests' tasks belong to (a task needs one once the client knows the schema). */
export const LIST_ID = "00000000-0000-4000-8000-0000000001d0";

