// Verifies a Supabase Auth access token the way the platform issues them:
// ES256/RS256 against the project's JWKS (inline or fetched, cached), or HS256
// against the legacy shared secret when one is configured. Nothing in the token
// is trusted before its signature, `exp`, `aud` and `role` have been checked.
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, importJWK, type JWK, type JWTPayload, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";
import { ApiError } from "../../_shared/errors.ts";
import type { Config } from "./config.ts";
import { createRemoteKeySet, KeySetUnavailable, REMOTE_KEY_SET } from "./remote-key-set.ts";
import { isUuid } from "../../_shared/uuid.ts";

export interface UserClaims extends JWTPayload {
  sub: string;
  role: "authenticated";
  session_id: string;
  /** The level when the token was issued; the session's current one is the request's c.var.aal (requireUser). */
  aal?: AssuranceLevel;
  email?: string;
  is_anonymous?: boolean;
}

/** Supabase Auth's assurance levels (the auth.aal_level enum), the only values its `aal` claim takes. */
export const ASSURANCE_LEVELS = ["aal1", "aal2", "aal3"] as const;
export type AssuranceLevel = typeof ASSURANCE_LEVELS[number];

const ASYMMETRIC = ["ES256", "RS256"];
const CLOCK_TOLERANCE_SECONDS = 5;

/** The key types a JSON Web Key has (IANA's "JSON Web Key Types"). */
const KEY_TYPES = ["EC", "RSA", "OKP", "oct", "AKP"];
/** Members only a private key has (RFC 7518 6.2.2 and 6.3.2, RFC 8037, ML-DSA's `priv`). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "priv"];
/** How jose verifies each algorithm of ASYMMETRIC with WebCrypto. */
const SIGNING: Record<string, AlgorithmIdentifier | EcdsaParams> = {
  ES256: { name: "ECDSA", hash: "SHA-256" },
  RS256: { name: "RSASSA-PKCS1-v1_5" },
};
/** The shortest RSA modulus jose verifies RS256 with. */
const MIN_RSA_BITS = 2048;

/**
 * The algorithm the verifier tries `jwk` for (as jose's key set picks keys), or
 * undefined when it never does: the key's `alg`, else the one its type means
 * (RSA: RS256; EC: ES256 unless it names another curve); a key marked for
 * another use than verifying (`use`, `key_ops`) is never tried.
 */
function verifyingAlgorithm(jwk: Record<string, unknown>): string | undefined {
  if (jwk.use !== undefined && jwk.use !== "sig") return undefined;
  if (Array.isArray(jwk.key_ops) && !jwk.key_ops.includes("verify")) return undefined;
  const alg = typeof jwk.alg === "string"
    ? jwk.alg
    : jwk.kty === "RSA"
    ? "RS256"
    : jwk.kty === "EC" && (jwk.crv === undefined || jwk.crv === "P-256")
    ? "ES256"
    : undefined;
  return alg !== undefined && ASYMMETRIC.includes(alg) ? alg : undefined;
}

/**
 * Imports every key of an inline key set (SUPABASE_JWKS) as the verifier will,
 * at start-up: jose imports a key on the first token it is needed for, so a key
 * that cannot verify would start fine and answer every token it signed 401.
 * Throws, naming the key, for one that is no JSON Web Key (no `kty` of one),
 * carries private members (a signing key pasted for its public half), or is
 * for ES256 or RS256 and does not import as a public key jose verifies with
 * (a coordinate cut short, another curve, RSA under 2048 bits). The keys the
 * verifier never tries pass: the legacy HS256 secret, which the Supabase CLI
 * lists as an `oct` key (this verifier takes it from TIDESYNC_JWT_SECRET), a
 * key of another algorithm or use (a third-party provider's). Returns how many
 * keys verify tokens.
 */
export async function importKeySet(keys: Record<string, unknown>[]): Promise<number> {
  let verifying = 0;
  for (const [index, jwk] of keys.entries()) {
    const name = `key ${index}${typeof jwk.kid === "string" ? ` (kid ${JSON.stringify(jwk.kid)})` : ""}`;
    if (typeof jwk.kty !== "string" || !KEY_TYPES.includes(jwk.kty)) {
      throw new Error(`${name} is not a JSON Web Key: its kty is ${JSON.stringify(jwk.kty)}, not one of ${KEY_TYPES.join(", ")}`);
    }
    const secret = PRIVATE_MEMBERS.filter((member) => Object.hasOwn(jwk, member));
    if (secret.length > 0) throw new Error(`${name} is a private key (it has ${secret.join(", ")}): give its public key only`);
    const alg = verifyingAlgorithm(jwk);
    if (!alg) continue;
    let key: CryptoKey;
    try {
      // As jose's key set imports it (extractable), so that what passes here verifies there.
      key = await importJWK(jwk as JWK, alg, { extractable: true }) as CryptoKey;
      // Deno's WebCrypto reads an EC key's point only when it first uses it (a point cut short or off
      // the curve imports): one verification, of nothing (false), uses it as jose will.
      await crypto.subtle.verify(SIGNING[alg], key, new Uint8Array(64), new Uint8Array(0));
    } catch (error) {
      throw new Error(`${name} is not an ${alg} public key: ${error instanceof Error ? error.message : String(error)}`);
    }
    const bits = (key.algorithm as RsaHashedKeyAlgorithm).modulusLength;
    if (bits < MIN_RSA_BITS) throw new Error(`${name} is a ${bits}-bit RSA key: ${alg} needs at least ${MIN_RSA_BITS} bits`);
    verifying++;
  }
  return verifying;
}

/**
 * The latest `exp` a token may carry: 9999-12-31T23:59:59Z, in seconds. A
 * later one (or a fractional one) is no expiry Supabase Auth issues, and a JS
 * Date cannot hold every such value (8640000000001 is past its range), so the
 * routes that answer the session's `expires_at` would fail on it: such a token
 * is refused (401) like any other malformed one (docs/errors.md).
 */
export const MAX_TOKEN_EXP_SECONDS = 253_402_300_799;

/**
 * Tokens that passed every check, remembered by their exact text: a device
 * sends the same access token with every request for up to an hour, and
 * verifying its ES256 signature costs ~0.7 ms of CPU each time
 * (docs/performance-history.md). An entry lives at most `ttlMs` and never past the
 * token's own `exp` (with the clock tolerance), so a key withdrawn from the
 * JWKS stops counting within a minute (the fetched JWKS itself is cached for
 * ten). Refusals are never remembered; the session is still checked in the
 * database on every request.
 */
export const VERIFIED_TOKEN_CACHE = { max: 1000, ttlMs: 60_000 } as const;

/**
 * A 401 of the verifier, and why: `expired` when the token passed every check
 * up to its `exp` (signature, algorithm, issuer: jose checks `exp` last), else
 * `invalid`. Routes answer both 401; the Expo manifest, where a token is
 * optional, goes on without it (middleware.ts optionalUser). `refusal` is the
 * check that failed, for the request's log line (token_refusal, docs/errors.md):
 * the caller is told no more than `message`, but a wrong issuer or secret
 * refuses every token, and the log must say which. It names a check, never
 * a claim's value.
 */
export class TokenRefused extends ApiError {
  constructor(readonly reason: "expired" | "invalid", message: string, readonly refusal: string) {
    super("UNAUTHENTICATED", message);
  }
}

const unauthenticated = (refusal: string, message = "the access token is invalid") => new TokenRefused("invalid", message, refusal);

/**
 * jose's refusal as token_refusal: a claim check as `<claim>_<jose's reason>`
 * (`iss_check_failed`, `exp_missing`), the usual misconfigurations by name, any
 * other by jose's error code.
 */
function joseRefusal(error: unknown): string {
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `${error.claim}_${error.reason}`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "bad_signature";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no_matching_key";
  if (error instanceof joseErrors.JOSEError) return error.code;
  return "unverifiable";
}

export type TokenVerifier = (authorization: string | undefined) => Promise<UserClaims>;

export function createTokenVerifier(auth: Config["auth"]): TokenVerifier {
  const keySet = auth.jwks
    ? createLocalJWKSet(auth.jwks as Parameters<typeof createLocalJWKSet>[0])
    : auth.jwksUrl
    ? createRemoteKeySet(new URL(auth.jwksUrl))
    : undefined;
  const secret = auth.hsSecret ? new TextEncoder().encode(auth.hsSecret) : undefined;
  // Aged by the wall clock, the clock `exp` is read by, read afresh at every lookup.
  const verified = new LRUCache<string, UserClaims>({ max: VERIFIED_TOKEN_CACHE.max, perf: Date, ttlResolution: 0 });

  return async function verifyToken(authorization) {
    const match = /^Bearer ([A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)$/i.exec(authorization?.trim() ?? "");
    if (!authorization) throw unauthenticated("missing", "missing Authorization: Bearer <access token>");
    if (!match) throw unauthenticated("not_bearer", "the Authorization header must be 'Bearer <access token>'");
    const token = match[1];
    const known = verified.get(token);
    if (known) return known;

    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw unauthenticated("not_a_jwt", "the access token is not a valid JWT");
    }

    let payload: JWTPayload;
    try {
      const options = { clockTolerance: CLOCK_TOLERANCE_SECONDS, issuer: auth.issuer, requiredClaims: ["exp"] };
      if (alg === "HS256" && secret) {
        payload = (await jwtVerify(token, secret, { ...options, algorithms: ["HS256"] })).payload;
      } else if (alg && ASYMMETRIC.includes(alg) && keySet) {
        payload = (await jwtVerify(token, keySet, { ...options, algorithms: ASYMMETRIC })).payload;
      } else {
        // The two a deploy gets wrong named apart: a legacy project without its secret, or no key set at all.
        const refusal = alg === "HS256" ? "hs256_without_secret" : alg && ASYMMETRIC.includes(alg) ? "no_key_set" : "alg_not_accepted";
        throw unauthenticated(refusal, "the access token is signed with an algorithm this project does not accept");
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new TokenRefused("expired", "the access token has expired; refresh the session", "expired");
      if (error instanceof KeySetUnavailable) {
        // The JWKS endpoint failed and no key set at hand decides: a dependency failure, not the caller's fault.
        throw new ApiError("UNAVAILABLE", "token verification keys are unreachable; retry shortly", {
          headers: { "Retry-After": String(REMOTE_KEY_SET.retryAfterFailureMs / 1000) },
          cause: error,
        });
      }
      throw unauthenticated(joseRefusal(error));
    }

    // jose has checked that exp is a number in the future; a whole number of seconds no later than the bound is ours.
    if (!Number.isSafeInteger(payload.exp) || payload.exp! > MAX_TOKEN_EXP_SECONDS) {
      throw unauthenticated("exp_implausible", "the access token's exp is not a plausible expiry time");
    }
    if (payload.role !== "authenticated") {
      throw new ApiError("FORBIDDEN", "this operation needs a signed-in user session");
    }
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!audiences.includes("authenticated")) throw unauthenticated("wrong_audience", "the access token has the wrong audience");
    if (typeof payload.sub !== "string" || !isUuid(payload.sub)) throw unauthenticated("no_user", "the access token has no user");
    if (typeof payload.session_id !== "string" || !isUuid(payload.session_id)) {
      throw unauthenticated("no_session", "the access token is not bound to a session");
    }
    // Echoed by whoami and the session routes: anything but a level Supabase issues is no token of its.
    if (payload.aal !== undefined && !ASSURANCE_LEVELS.includes(payload.aal as AssuranceLevel)) {
      throw unauthenticated("bad_aal", "the access token's aal is not an assurance level");
    }
    const claims = Object.freeze(payload) as UserClaims;
    const ttl = Math.min(VERIFIED_TOKEN_CACHE.ttlMs, ((payload.exp ?? 0) + CLOCK_TOLERANCE_SECONDS) * 1000 - Date.now());
    if (ttl > 0) verified.set(token, claims, { ttl });
    return claims;
  };
}
