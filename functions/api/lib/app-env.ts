// What every route handler can reach: the verified caller, the request id,
// the shared dependencies, and fields to add to the request's log line.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { InexactNumber } from "../../_shared/inexact-numbers.ts";
import type { AdmissionSlot } from "./concurrency-limit.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db.ts";
import type { IgnoredToken } from "./middleware.ts";
import type { AssuranceLevel, TokenVerifier, UserClaims } from "./verify-token.ts";

export interface Deps {
  config: Config;
  db: Db;
  verifyToken: TokenVerifier;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    user: UserClaims;
    /**
     * The database's now() at the request's admission statement (rate limit + session check, requireUser),
     * in the wire format: the answer's server_time when no statement of the route answers one.
     */
    serverTime: string;
    /**
     * The caller's assurance level: its session's auth.sessions.aal, read by the same admission statement. Not the
     * token's aal claim, which says the level when the token was issued (docs/security-model.md, MFA).
     */
    aal: AssuranceLevel;
    deviceInstallationId?: string;
    /** Why optionalUser went on without the request's token, when it did (the request then sees what one without a token sees). */
    tokenIgnored?: IgnoredToken;
    /** The verified Standard Webhooks `webhook-id` of a release manager's request. */
    webhookId?: string;
    /** SHA-256 (hex) of that request as signed ("<METHOD> <target>\n<body>"): what a delivery with this id was. */
    webhookRequestSha256?: string;
    /** The request's JSON body as parsed once by jsonBody (c.req.json() parses the text again on every call). */
    jsonBody?: unknown;
    /** That body's numbers JSON.parse read as others (inexact-numbers.ts: none, almost always), found once by jsonBody. */
    inexactNumbers?: InexactNumber[];
    /** Validates the route's query once (route-validation.ts checkQuery): requireUser calls it before spending the budget. */
    checkQuery?: () => Promise<void>;
    /** The request's admission slot (routes behind the limit only), given back while its body arrives. */
    admission?: AdmissionSlot;
    /** Extra fields for the one log line of this request (counts, ids; no personal data). */
    logFields: Record<string, unknown>;
  };
}

export type App = OpenAPIHono<AppEnv>;
