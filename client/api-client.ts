// Typed calls to every route of api-v1.md. Only `fetch` and standard web
// APIs, so it runs in React Native/Expo, browsers, Deno and Node alike.
// Responses are checked with the same zod schemas the server is built from;
// every failure becomes one of the errors of ./api-error.ts.
import type { z } from "zod";
import { errorEnvelopeSchema } from "../functions/_shared/errors.ts";
import {
  DELETION_CONFIRMATION,
  deletionScheduledResponseSchema,
  deletionStateResponseSchema,
} from "../functions/_shared/schemas/account-deletion.ts";
import { type AccountExport, accountExportSchema } from "../functions/_shared/schemas/account-export.ts";
import { type DeviceList, deviceListSchema } from "../functions/_shared/schemas/devices.ts";
import { type MetaResponse, metaResponseSchema } from "../functions/_shared/schemas/meta.ts";
import {
  type NotificationHistoryResponse,
  notificationHistoryResponseSchema,
  type NotificationPreferences,
  type NotificationPreferencesPut,
  notificationPreferencesSchema,
} from "../functions/_shared/schemas/notifications.ts";
import {
  type Feedback,
  type FeedbackRequest,
  feedbackSchema,
  type UpdateCheckResponse,
  updateCheckResponseSchema,
} from "../functions/_shared/schemas/releases.ts";
import { type SessionStartRequest, type SessionStartResponse, sessionStartResponseSchema } from "../functions/_shared/schemas/session.ts";
import {
  type ChangesResponse,
  changesResponseSchema,
  type SyncBatchRequest,
  type SyncBatchResponse,
  syncBatchResponseSchema,
  type SyncRecord,
  syncRecordSchema,
} from "../functions/_shared/schemas/sync.ts";
import { type WhoamiResponse, whoamiResponseSchema } from "../functions/_shared/schemas/whoami.ts";
import { unlessAborted } from "./abortable.ts";
import { TidesyncAbortedError, TidesyncApiError, TidesyncNetworkError, TidesyncResponseError } from "./api-error.ts";
import { parseRetryAfter } from "./backoff.ts";
import { tokenIdentity, tokenSubject } from "./token-subject.ts";

export type AccessTokenGetter = () => Promise<string | null | undefined> | string | null | undefined;
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface TidesyncApiOptions {
  /** `${SUPABASE_URL}/functions/v1/api` (no trailing slash needed). */
  baseUrl: string;
  /** Called before every request, e.g. `() => supabase.auth.getSession().then((s) => s.data.session?.access_token)`. */
  getAccessToken: AccessTokenGetter;
  /** Defaults to the global fetch. Tests pass a fault-injecting one. */
  fetch?: FetchFunction;
  /** Per request; on expiry the request is aborted and a TIMEOUT error raised. Default 30 s. */
  timeoutMs?: number;
  /** Sent with every request, e.g. `{ apikey: SUPABASE_PUBLISHABLE_KEY }` for the Supabase gateway. */
  headers?: Record<string, string>;
}

/** What a caller that may send only some requests (a store's sync) checks before each leaves. */
export interface RequestGuard {
  /**
   * Called before each authenticated request with the user its token names (its `sub`, not
   * verified; null: no token, or not a JWT), the token, and its Supabase session (`session_id`;
   * null without one), each token decoded once. Throwing stops the request unsent: the answer to a
   * request that went out is always one to that user's token.
   */
  beforeSend?: (userId: string | null, token: string | null, session: string | null) => void | Promise<void>;
  /** Once aborted, no request is sent, and one under way is abandoned (TidesyncAbortedError). */
  signal?: AbortSignal;
}

export interface ChangesParams {
  cursor?: string;
  limit?: number;
  collections?: readonly string[];
}

interface RequestSpec<T> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  /** null: the route answers 204 without a body. */
  schema: z.ZodType<T> | null;
  body?: unknown;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string>;
  auth?: boolean;
  /** Sent with this token, not the getter's, and unguarded: a guard's own check of the token it guards. */
  token?: string;
  /**
   * The body is checked against `schema` and handed over as received, fields the schema does not
   * name included (the account export: a later server adds sections without a new export_version,
   * and the user's copy must hold them). Otherwise the schema's parse, which strips them.
   */
  asReceived?: boolean;
}

export interface ApiResult<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** Notification preferences with their ETag (the version to send back as If-Match). */
export interface VersionedPreferences {
  preferences: NotificationPreferences;
  etag: string | null;
}

/** If-Match value for a version: the quoted form the server's ETag uses. */
function ifMatchFor(version: number | string): string {
  return typeof version === "number" ? `"${version}"` : version;
}

function userOf(token: string | null | undefined): string | null {
  return token ? tokenSubject(token) : null;
}

export class TidesyncApi {
  /** The API's base URL, without a trailing slash. */
  readonly baseUrl: string;
  private readonly fetchImpl: FetchFunction;
  private readonly timeoutMs: number;

  constructor(private readonly options: TidesyncApiOptions, private readonly guard: RequestGuard = {}) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    // Bound, so a browser's window.fetch is not called with another `this`.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** This API, with `guard` checking each request before it is sent (TidesyncClient: the store's owner, close()). */
  guarded(guard: RequestGuard): TidesyncApi {
    return new TidesyncApi(this.options, guard);
  }

  // ------------------------------------------------------------- meta, whoami
  /** GET /v1/meta: limits and collections (no auth). */
  async meta(): Promise<MetaResponse> {
    return (await this.request({ method: "GET", path: "/v1/meta", schema: metaResponseSchema, auth: false })).body;
  }

  /** GET /v1/whoami: the identity behind the current token. */
  async whoami(): Promise<WhoamiResponse> {
    return (await this.request({ method: "GET", path: "/v1/whoami", schema: whoamiResponseSchema })).body;
  }

  /**
   * GET /v1/whoami with `token`, not the getter's, and without this API's guard: which account a
   * token is of, asked by a guard about the very token it checks (client/store-owner.ts).
   */
  async whoamiWith(token: string): Promise<WhoamiResponse> {
    return (await this.request({ method: "GET", path: "/v1/whoami", schema: whoamiResponseSchema, token })).body;
  }

  /** The current access token (null without one), as the getter gives it: no request. */
  async accessToken(): Promise<string | null> {
    return (await unlessAborted(this.options.getAccessToken(), this.guard.signal)) || null;
  }

  /** The user the current access token names (its `sub`, not verified: no request), or null without a JWT. */
  async tokenUserId(): Promise<string | null> {
    return userOf(await unlessAborted(this.options.getAccessToken(), this.guard.signal));
  }

  // -------------------------------------------------------- session, devices
  /** POST /v1/auth/session: binds the Supabase session to this device; `created` on the first call per installation. */
  async startSession(request: SessionStartRequest): Promise<{ created: boolean; body: SessionStartResponse }> {
    const result = await this.request({ method: "POST", path: "/v1/auth/session", schema: sessionStartResponseSchema, body: request });
    return { created: result.status === 201, body: result.body };
  }

  /** DELETE /v1/auth/session: signs this device out (its refresh token stops working). */
  async endSession(): Promise<void> {
    await this.request({ method: "DELETE", path: "/v1/auth/session", schema: null });
  }

  /** GET /v1/devices: the caller's devices (`current` marks this one). */
  async listDevices(): Promise<DeviceList> {
    return (await this.request({ method: "GET", path: "/v1/devices", schema: deviceListSchema })).body;
  }

  /** DELETE /v1/devices/{id}: signs that device out remotely (404 for unknown or other users' ids). */
  async deleteDevice(id: string): Promise<void> {
    await this.request({ method: "DELETE", path: `/v1/devices/${encodeURIComponent(id)}`, schema: null });
  }

  // ------------------------------------------------------------- notifications
  /** GET /v1/users/me/notifications (the defaults until the user saves some). */
  async getNotificationPreferences(): Promise<VersionedPreferences> {
    const result = await this.request({ method: "GET", path: "/v1/users/me/notifications", schema: notificationPreferencesSchema });
    return { preferences: result.body, etag: result.headers.get("etag") };
  }

  /**
   * PUT /v1/users/me/notifications: replaces the whole document. With
   * `ifMatch` (the version or ETag read), a concurrent change makes it fail
   * with PRECONDITION_FAILED (412) instead of being overwritten.
   */
  async putNotificationPreferences(document: NotificationPreferencesPut, options: { ifMatch?: number | string } = {}): Promise<VersionedPreferences> {
    const headers = options.ifMatch === undefined ? undefined : { "if-match": ifMatchFor(options.ifMatch) };
    const result = await this.request({ method: "PUT", path: "/v1/users/me/notifications", schema: notificationPreferencesSchema, body: document, headers });
    return { preferences: result.body, etag: result.headers.get("etag") };
  }

  /** GET /v1/users/me/notifications/history: the caller's changes (the newest 1,000 the server keeps), newest first; pass `next_before` as `before`. */
  async getNotificationHistory(params: { limit?: number; before?: number } = {}): Promise<NotificationHistoryResponse> {
    const query = {
      limit: params.limit === undefined ? undefined : String(params.limit),
      before: params.before === undefined ? undefined : String(params.before),
    };
    return (await this.request({ method: "GET", path: "/v1/users/me/notifications/history", schema: notificationHistoryResponseSchema, query })).body;
  }

  // ---------------------------------------------------------------- test builds
  /**
   * GET /v1/releases/check: `update`, the newest build of `channel` for this
   * platform above `buildNumber` that the signed-in user may install, with a
   * download link that expires (null: none). `level: "required"` means the
   * running build is below the channel's minimum (`min_supported_build`) and
   * `update` meets it: block the app until the user installs it. (`release` is
   * `update`'s deprecated name.)
   */
  async checkForUpdate(params: { platform: "ios" | "android" | "web"; channel: string; buildNumber: number }): Promise<UpdateCheckResponse> {
    const query = { platform: params.platform, channel: params.channel, build_number: String(params.buildNumber) };
    return (await this.request({ method: "GET", path: "/v1/releases/check", schema: updateCheckResponseSchema, query })).body;
  }

  /**
   * POST /v1/releases/{id}/feedback: a tester's feedback on a build (404 for a release they may not
   * see; 403 FORBIDDEN once the user sent the most one user may send on it, GET /v1/meta's
   * releases.max_feedback_per_user_and_release).
   */
  async sendReleaseFeedback(releaseId: string, feedback: FeedbackRequest): Promise<Feedback> {
    return (await this.request({ method: "POST", path: `/v1/releases/${encodeURIComponent(releaseId)}/feedback`, schema: feedbackSchema, body: feedback })).body;
  }

  // ------------------------------------------------------------------ account
  /**
   * GET /v1/users/me/export: everything tidesync holds about the user (3 per
   * hour). Parsed in memory: to save a large account's export to a file, fetch
   * the URL yourself and stream the body. Checked against the export's schema and
   * returned as the server sent it, with any section or field a later server
   * added (docs/account-export.md, "Format").
   */
  async exportAccount(): Promise<AccountExport> {
    return (await this.request({ method: "GET", path: "/v1/users/me/export", schema: accountExportSchema, asReceived: true })).body;
  }

  /** GET /v1/users/me/deletion: whether the account is scheduled for deletion. */
  async getAccountDeletion(): Promise<z.infer<typeof deletionStateResponseSchema>> {
    return (await this.request({ method: "GET", path: "/v1/users/me/deletion", schema: deletionStateResponseSchema })).body;
  }

  /**
   * POST /v1/users/me/deletion: call only after the user confirmed in the app's
   * own words; also sends the fixed confirmation (optional for the server, which
   * refuses a wrong one: a safeguard against a stray call). Every other
   * session of the user is signed out at once.
   */
  async requestAccountDeletion(): Promise<z.infer<typeof deletionScheduledResponseSchema>> {
    const body = { confirm: DELETION_CONFIRMATION };
    return (await this.request({ method: "POST", path: "/v1/users/me/deletion", schema: deletionScheduledResponseSchema, body })).body;
  }

  /** DELETE /v1/users/me/deletion: cancels a scheduled deletion (a no-op when none is). */
  async cancelAccountDeletion(): Promise<void> {
    await this.request({ method: "DELETE", path: "/v1/users/me/deletion", schema: null });
  }

  // --------------------------------------------------------------------- sync
  /** POST /v1/sync/batch: one result per op, in order. */
  async syncBatch(batch: SyncBatchRequest): Promise<SyncBatchResponse> {
    return (await this.request({ method: "POST", path: "/v1/sync/batch", schema: syncBatchResponseSchema, body: batch })).body;
  }

  /** GET /v1/sync/changes: one page; follow `cursor` while `has_more`. */
  async syncChanges(params: ChangesParams = {}): Promise<ChangesResponse> {
    const query = {
      cursor: params.cursor,
      limit: params.limit === undefined ? undefined : String(params.limit),
      collections: params.collections && params.collections.length > 0 ? params.collections.join(",") : undefined,
    };
    return (await this.request({ method: "GET", path: "/v1/sync/changes", schema: changesResponseSchema, query })).body;
  }

  /**
   * GET /v1/sync/records/{collection}/{id}: one record as a pull lists it (a tombstone:
   * `deleted: true`). One the caller cannot see, or none, is TidesyncApiError NOT_FOUND with the
   * detail isRecordNotFound() recognises (without it: a server from before the route).
   */
  async syncRecord(collection: string, id: string): Promise<SyncRecord> {
    const path = `/v1/sync/records/${encodeURIComponent(collection)}/${encodeURIComponent(id)}`;
    return (await this.request({ method: "GET", path, schema: syncRecordSchema })).body;
  }

  // ------------------------------------------------------------------ plumbing
  /** Sends one request and returns the validated body, or throws a Tidesync*Error. */
  async request<T>(spec: RequestSpec<T>): Promise<ApiResult<T>> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const headers: Record<string, string> = { accept: "application/json", ...(this.options.headers ?? {}), ...(spec.headers ?? {}) };
    const { signal } = this.guard;
    if (signal?.aborted) throw new TidesyncAbortedError();
    if (spec.token !== undefined) {
      headers.authorization = `Bearer ${spec.token}`;
    } else if (spec.auth !== false) {
      const token = (await unlessAborted(this.options.getAccessToken(), signal)) || null;
      // Whose token this is, checked with the very token sent: the user may switch between two requests.
      const identity = token ? tokenIdentity(token) : null;
      await unlessAborted(this.guard.beforeSend?.(identity?.user ?? null, token, identity?.session ?? null), signal);
      if (token) headers.authorization = `Bearer ${token}`;
    }
    if (signal?.aborted) throw new TidesyncAbortedError();
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers["content-type"] = "application/json";
    }

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const abandon = () => controller.abort();
    signal?.addEventListener("abort", abandon);
    let response: Response;
    let text: string;
    try {
      // Given up on (timeout, close()) is given up on, also with a fetch that ignores its signal.
      response = await unlessAborted(this.fetchImpl(url.toString(), { method: spec.method, headers, body, signal: controller.signal }), controller.signal);
      text = await unlessAborted(response.text(), controller.signal);
    } catch (error) {
      // The request may or may not have reached the server: callers resend the same op_ids.
      if (signal?.aborted) throw new TidesyncAbortedError({ cause: error });
      if (timedOut) throw new TidesyncNetworkError("TIMEOUT", `no answer within ${this.timeoutMs} ms`, { cause: error });
      throw new TidesyncNetworkError("NETWORK", "the server could not be reached", { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abandon);
    }

    const requestId = response.headers.get("x-request-id") ?? undefined;
    const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
    let json: unknown = undefined;
    if (text !== "") {
      try {
        json = JSON.parse(text);
      } catch (error) {
        throw new TidesyncResponseError({ message: `HTTP ${response.status} with a body that is not JSON`, status: response.status, retryAfter, requestId, cause: error });
      }
    }

    if (!response.ok) {
      const envelope = errorEnvelopeSchema.safeParse(json);
      if (!envelope.success) {
        throw new TidesyncResponseError({ message: `HTTP ${response.status} without the error envelope`, status: response.status, retryAfter, requestId });
      }
      const { code, message, retryable, details, request_id } = envelope.data.error;
      throw new TidesyncApiError({ code, message, status: response.status, retryable, retryAfter, details, requestId: request_id ?? requestId });
    }

    if (spec.schema === null) return { status: response.status, body: undefined as T, headers: response.headers };
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      throw new TidesyncResponseError({ message: `HTTP ${response.status} with a body that does not match the contract`, status: response.status, requestId, cause: parsed.error });
    }
    return { status: response.status, body: spec.asReceived ? json as T : parsed.data, headers: response.headers };
  }
}
