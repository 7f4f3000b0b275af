// Access tokens in the exact claim shape Supabase Auth issues (ES256 via a
// JWKS, or the legacy HS256 secret). Used by the tests (a per-run key) and by
// `npm start` (a dev-only key) for users and sessions that exist in auth.*.
import { importJWK, type JWK, type JWTPayload, SignJWT } from "jose";

/** Supabase Auth's issuer on the local stack's default port (tests; `npm start` passes its own). */
export const LOCAL_ISSUER = "http://127.0.0.1:54321/auth/v1";

export interface TokenOptions {
  userId: string;
  sessionId: string;
  email?: string;
  /** `iss` (default LOCAL_ISSUER). */
  issuer?: string;
  /** Overrides or extra claims; `undefined` removes a claim. */
  claims?: Record<string, unknown>;
  expiresInSeconds?: number;
  issuedAt?: number;
}

export function supabaseClaims(options: TokenOptions): JWTPayload {
  const now = options.issuedAt ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: options.issuer ?? LOCAL_ISSUER,
    sub: options.userId,
    aud: "authenticated",
    exp: now + (options.expiresInSeconds ?? 3600),
    iat: now,
    email: options.email ?? `${options.userId}@test.tidesync.dev`,
    phone: "",
    app_metadata: { provider: "email", providers: ["email"] },
    user_metadata: { email_verified: true },
    role: "authenticated",
    aal: "aal1",
    amr: [{ method: "password", timestamp: now }],
    session_id: options.sessionId,
    is_anonymous: false,
  };
  for (const [key, value] of Object.entries(options.claims ?? {})) {
    if (value === undefined) delete claims[key];
    else claims[key] = value;
  }
  return claims as JWTPayload;
}

export async function signEs256(privateJwk: JWK, payload: JWTPayload): Promise<string> {
  const key = await importJWK(privateJwk, "ES256");
  return await new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid: privateJwk.kid, typ: "JWT" }).sign(key);
}

export async function signHs256(secret: string, payload: JWTPayload): Promise<string> {
  return await new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(secret));
}
