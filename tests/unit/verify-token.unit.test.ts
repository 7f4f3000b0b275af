// Access-token verification as Supabase issues tokens, in Node with jose:
// JWKS (inline and fetched), legacy HS256, and every rejection the contract names.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { ApiError } from "../../functions/_shared/errors.ts";
import { createTokenVerifier, MAX_TOKEN_EXP_SECONDS, TokenRefused, VERIFIED_TOKEN_CACHE } from "../../functions/api/lib/verify-token.ts";
import { createSigningKeys, type SigningKeys } from "../support/signing-keys.ts";
import { newIds, signEs256, signHs256, supabaseClaims, type TokenOptions } from "../support/tokens.ts";

let keys: SigningKeys;
let rsaPrivate: JWK;
let rsaPublic: JWK;
let jwksServer: Server;
let jwksUrl: string;
let jwksRequests = 0;

beforeAll(async () => {
  keys = await createSigningKeys();
  const rsa = await generateKeyPair("RS256", { extractable: true });
  rsaPrivate = { ...(await exportJWK(rsa.privateKey)), kid: "rsa-1", alg: "RS256" };
  rsaPublic = { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" };
  jwksServer = createServer((_req, res) => {
    jwksRequests++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: [...keys.publicJwks.keys, rsaPublic] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/auth/v1/.well-known/jwks.json`;
});

afterAll(async () => {
  await new Promise((resolve) => jwksServer.close(resolve));
});

const claims = (overrides: Partial<TokenOptions> = {}) => supabaseClaims({ ...newIds(), ...overrides });
const inline = () => createTokenVerifier({ jwks: { keys: [...keys.publicJwks.keys, rsaPublic] as Record<string, unknown>[] }, hsSecret: keys.hsSecret });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("verifyToken", () => {
  it("accepts an ES256 token from the inline JWKS and returns its claims", async () => {
    const payload = claims();
    const verified = await inline()(`Bearer ${await signEs256(keys.privateJwk, payload)}`);
    expect(verified).toMatchObject({ sub: payload.sub, session_id: payload.session_id, role: "authenticated" });
  });

  it("accepts an RS256 token", async () => {
    const key = await importJWK(rsaPrivate, "RS256");
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: "RS256", kid: "rsa-1" }).sign(key);
    expect((await inline()(`Bearer ${token}`)).role).toBe("authenticated");
  });

  it("accepts a legacy HS256 token when the secret is configured, and refuses it otherwise", async () => {
    const token = await signHs256(keys.hsSecret, claims());
    expect((await inline()(`Bearer ${token}`)).role).toBe("authenticated");
    const withoutSecret = createTokenVerifier({ jwks: keys.publicJwks as { keys: Record<string, unknown>[] } });
    expect((await rejection(withoutSecret(`Bearer ${token}`))).code).toBe("UNAUTHENTICATED");
  });

  it("fetches the JWKS from the project's endpoint and caches it", async () => {
    const verify = createTokenVerifier({ jwksUrl });
    const before = jwksRequests;
    await verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`);
    await verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`);
    expect(jwksRequests - before).toBe(1);
  });

  it("answers 503 UNAVAILABLE (retryable, Retry-After) when the JWKS endpoint is unreachable", async () => {
    const verify = createTokenVerifier({ jwksUrl: "http://127.0.0.1:9/auth/v1/.well-known/jwks.json" });
    const error = await rejection(verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`));
    expect({ code: error.code, status: error.status, retryable: error.retryable }).toEqual({ code: "UNAVAILABLE", status: 503, retryable: true });
    expect(Number(error.headers["Retry-After"])).toBeGreaterThan(0);
  });

  it.each([
    ["no header", undefined, /missing/],
    ["another scheme", "Basic dXNlcjpwYXNz", /Bearer/],
    ["a non-JWT", "Bearer abc", /Bearer/],
    ["an undecodable header", "Bearer e30x.e30.sig", /not a valid JWT/],
  ])("refuses %s with 401", async (_name, header, message) => {
    const error = await rejection(inline()(header));
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(message);
  });

  it("refuses a forged signature (another key under the same kid)", async () => {
    const forger = await createSigningKeys();
    const token = await signEs256({ ...forger.privateJwk, kid: keys.privateJwk.kid }, claims());
    expect((await rejection(inline()(`Bearer ${token}`))).code).toBe("UNAUTHENTICATED");
  });

  it("refuses an unsigned token (alg none)", async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const token = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims())}.`;
    expect((await rejection(inline()(`Bearer ${token}`))).message).toMatch(/algorithm/);
  });

  it("refuses an expired token, saying so", async () => {
    const token = await signEs256(keys.privateJwk, claims({ issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresInSeconds: 3600 }));
    expect((await rejection(inline()(`Bearer ${token}`))).message).toMatch(/expired/);
  });

  it("refuses a token without exp", async () => {
    const token = await signEs256(keys.privateJwk, claims({ claims: { exp: undefined } }));
    expect((await rejection(inline()(`Bearer ${token}`))).code).toBe("UNAUTHENTICATED");
  });

  it("refuses an exp that is no plausible expiry (fractional, past MAX_TOKEN_EXP_SECONDS, past what a Date holds); takes the bound itself", async () => {
    const inAnHour = Math.floor(Date.now() / 1000) + 3600;
    for (const exp of [inAnHour + 0.5, MAX_TOKEN_EXP_SECONDS + 1, 8_640_000_000_001, 1e20]) {
      const token = await signEs256(keys.privateJwk, claims({ claims: { exp } }));
      const error = await rejection(inline()(`Bearer ${token}`));
      expect({ exp, code: error.code, message: error.message }).toEqual({ exp, code: "UNAUTHENTICATED", message: expect.stringMatching(/exp/) });
    }
    const latest = await inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { exp: MAX_TOKEN_EXP_SECONDS } }))}`);
    expect(new Date(latest.exp! * 1000).toISOString()).toBe("9999-12-31T23:59:59.000Z");
  });

  it("refuses the wrong audience", async () => {
    const token = await signEs256(keys.privateJwk, claims({ claims: { aud: "someone-else" } }));
    expect((await rejection(inline()(`Bearer ${token}`))).message).toMatch(/audience/);
  });

  it("answers 403 for a valid token of another role (the anon key)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signEs256(keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 60 });
    const error = await rejection(inline()(`Bearer ${token}`));
    expect({ code: error.code, status: error.status }).toEqual({ code: "FORBIDDEN", status: 403 });
  });

  it("refuses a token without a user or a session", async () => {
    expect((await rejection(inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { sub: "not-a-uuid" } }))}`))).message)
      .toMatch(/no user/);
    expect((await rejection(inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { session_id: undefined } }))}`))).message)
      .toMatch(/session/);
  });

  it("refuses an aal that is no assurance level Supabase issues, and takes each one it does", async () => {
    for (const aal of [{ x: 1 }, "aal9", 2, null, ["aal2"]]) {
      const error = await rejection(inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { aal } }))}`));
      expect({ aal, code: error.code, message: error.message }).toEqual({ aal, code: "UNAUTHENTICATED", message: expect.stringMatching(/aal/) });
    }
    for (const aal of ["aal1", "aal2", "aal3"]) {
      expect((await inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { aal } }))}`)).aal).toBe(aal);
    }
    expect((await inline()(`Bearer ${await signEs256(keys.privateJwk, claims({ claims: { aal: undefined } }))}`)).aal).toBeUndefined();
  });

  it("checks the issuer when one is configured", async () => {
    const verify = createTokenVerifier({ jwks: keys.publicJwks as { keys: Record<string, unknown>[] }, issuer: "https://abc.supabase.co/auth/v1" });
    const token = await signEs256(keys.privateJwk, claims());
    expect((await rejection(verify(`Bearer ${token}`))).code).toBe("UNAUTHENTICATED");
    const good = await signEs256(keys.privateJwk, claims({ claims: { iss: "https://abc.supabase.co/auth/v1" } }));
    expect((await verify(`Bearer ${good}`)).iss).toBe("https://abc.supabase.co/auth/v1");
  });
});

// Every refusal answers the caller the same 401; the request's log line says why (token_refusal, docs/errors.md),
// so that a misconfigured issuer or secret, which refuses every token, is found from the log.
describe("verifyToken: why a token was refused (the log's token_refusal)", () => {
  const hsOnly = () => createTokenVerifier({ hsSecret: keys.hsSecret });
  const es256 = (overrides: Partial<TokenOptions> = {}) => signEs256(keys.privateJwk, claims(overrides));
  const refusal = async (verify: ReturnType<typeof createTokenVerifier>, header: string | undefined) => {
    const error = await rejection(verify(header));
    expect(error).toBeInstanceOf(TokenRefused);
    return (error as TokenRefused).refusal;
  };

  it("names the misconfiguration that refuses every token: the issuer, the HS256 secret, a key set or secret not set", async () => {
    const issuer = "https://abc.supabase.co/auth/v1";
    const withIssuer = createTokenVerifier({ jwks: keys.publicJwks as { keys: Record<string, unknown>[] }, issuer: `${issuer}/` });
    expect(await refusal(withIssuer, `Bearer ${await es256({ claims: { iss: issuer } })}`)).toBe("iss_check_failed");
    const wrongSecret = createTokenVerifier({ hsSecret: "x".repeat(40) });
    expect(await refusal(wrongSecret, `Bearer ${await signHs256(keys.hsSecret, claims())}`)).toBe("bad_signature");
    const jwksOnly = createTokenVerifier({ jwks: keys.publicJwks as { keys: Record<string, unknown>[] } });
    expect(await refusal(jwksOnly, `Bearer ${await signHs256(keys.hsSecret, claims())}`)).toBe("hs256_without_secret");
    expect(await refusal(hsOnly(), `Bearer ${await es256()}`)).toBe("no_key_set");
    const forger = await createSigningKeys();
    expect(await refusal(inline(), `Bearer ${await signEs256({ ...forger.privateJwk, kid: "unknown" }, claims())}`)).toBe("no_matching_key");
  });

  it("names what was wrong with the token itself", async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const cases: [string | undefined, string][] = [
      [undefined, "missing"],
      ["Basic dXNlcjpwYXNz", "not_bearer"],
      ["Bearer e30x.e30.sig", "not_a_jwt"],
      [`Bearer ${b64({ alg: "none", typ: "JWT" })}.${b64(claims())}.`, "alg_not_accepted"],
      [`Bearer ${await es256({ issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresInSeconds: 3600 })}`, "expired"],
      [`Bearer ${await es256({ claims: { exp: undefined } })}`, "exp_missing"],
      [`Bearer ${await es256({ claims: { exp: MAX_TOKEN_EXP_SECONDS + 1 } })}`, "exp_implausible"],
      [`Bearer ${await es256({ claims: { aud: "someone-else" } })}`, "wrong_audience"],
      [`Bearer ${await es256({ claims: { sub: "nobody" } })}`, "no_user"],
      [`Bearer ${await es256({ claims: { session_id: undefined } })}`, "no_session"],
      [`Bearer ${await es256({ claims: { aal: "aal9" } })}`, "bad_aal"],
    ];
    for (const [header, expected] of cases) expect({ header, refusal: await refusal(inline(), header) }).toEqual({ header, refusal: expected });
  });
});

describe("verifyToken: remembered verifications", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers a repeated token from memory, but never past its exp", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const verify = inline();
    const token = await signEs256(keys.privateJwk, claims({ expiresInSeconds: 30 }));
    const first = await verify(`Bearer ${token}`);
    expect(await verify(`Bearer ${token}`)).toBe(first); // the very claims: no second verification
    vi.advanceTimersByTime(36_000); // past exp + the 5 s clock tolerance
    expect((await rejection(verify(`Bearer ${token}`))).message).toMatch(/expired/);
  });

  it("verifies a token that differs from a remembered one in its signature afresh, and refuses it", async () => {
    const verify = inline();
    const token = await signEs256(keys.privateJwk, claims());
    await verify(`Bearer ${token}`);
    const last = token.at(-2) === "A" ? "B" : "A";
    const tampered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
    expect((await rejection(verify(`Bearer ${tampered}`))).code).toBe("UNAUTHENTICATED");
    expect((await verify(`Bearer ${token}`)).role).toBe("authenticated");
  });

  it(`stops accepting a token within ${VERIFIED_TOKEN_CACHE.ttlMs / 1000} s of the JWKS refresh that withdrew its key`, async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    let served = { keys: [...keys.publicJwks.keys] as Record<string, unknown>[] };
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const verify = createTokenVerifier({ jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json` });
      const token = await signEs256(keys.privateJwk, claims({ expiresInSeconds: 3600 }));
      expect((await verify(`Bearer ${token}`)).role).toBe("authenticated");
      served = { keys: [rsaPublic as Record<string, unknown>] }; // the ES256 key is withdrawn
      vi.advanceTimersByTime(11 * 60_000); // past jose's 10-minute JWKS cache and our TTL
      expect((await rejection(verify(`Bearer ${token}`))).code).toBe("UNAUTHENTICATED");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("verifyToken: a failing JWKS endpoint", () => {
  type Answer = "keys" | "503" | "502" | "302" | "html" | "not-a-key-set";
  let answer: Answer = "keys";
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      if (answer === "keys") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(keys.publicJwks));
      } else if (answer === "302") {
        res.writeHead(302, { location: "https://example.com/jwks.json" }).end();
      } else if (answer === "html") {
        res.setHeader("content-type", "text/html");
        res.end("<html>maintenance</html>");
      } else if (answer === "not-a-key-set") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ error: "upstream" }));
      } else {
        res.writeHead(Number(answer)).end("upstream unavailable");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/v1/.well-known/jwks.json`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  afterEach(() => {
    answer = "keys";
    vi.useRealTimers();
  });

  const expectUnavailable = (error: ApiError) => {
    expect({ code: error.code, status: error.status, retryable: error.retryable }).toEqual({ code: "UNAVAILABLE", status: 503, retryable: true });
    expect(Number(error.headers["Retry-After"])).toBeGreaterThan(0);
  };

  it.each<Answer>(["503", "502", "302", "html", "not-a-key-set"])("answers 503 UNAVAILABLE, not 401, when the endpoint answers %s", async (failure) => {
    answer = failure;
    const verify = createTokenVerifier({ jwksUrl: url });
    expectUnavailable(await rejection(verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`)));
  });

  it("verifies on the first request after the endpoint is back when no key set was ever fetched", async () => {
    const verify = createTokenVerifier({ jwksUrl: url });
    const token = `Bearer ${await signEs256(keys.privateJwk, claims())}`;
    answer = "503";
    expectUnavailable(await rejection(verify(token)));
    answer = "keys";
    expect((await verify(token)).role).toBe("authenticated");
  });

  it("keeps verifying with the last good key set when a refresh after the cache expired fails", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const verify = createTokenVerifier({ jwksUrl: url });
    const token = await signEs256(keys.privateJwk, claims({ expiresInSeconds: 3600 }));
    expect((await verify(`Bearer ${token}`)).role).toBe("authenticated");
    answer = "503";
    vi.advanceTimersByTime(11 * 60_000); // past the 10-minute JWKS cache and the verified-token memory
    expect((await verify(`Bearer ${token}`)).role).toBe("authenticated");
    expect((await verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`)).role).toBe("authenticated");
    vi.advanceTimersByTime(60_000); // past the pause after a failure: the refresh is tried again, and fails again
    expect((await verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`)).role).toBe("authenticated");
    // A forged signature is still refused, the old set at hand holding the kid.
    const forger = await createSigningKeys();
    const forged = await signEs256({ ...forger.privateJwk, kid: keys.privateJwk.kid }, claims());
    expect((await rejection(verify(`Bearer ${forged}`))).code).toBe("UNAUTHENTICATED");
  });

  it("answers 503 for a kid the last good set does not hold while the endpoint fails (a key may have been added), 401 once it answers", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const verify = createTokenVerifier({ jwksUrl: url });
    expect((await verify(`Bearer ${await signEs256(keys.privateJwk, claims())}`)).role).toBe("authenticated");
    const stranger = await createSigningKeys();
    const unknownKid = await signEs256({ ...stranger.privateJwk, kid: "rotated-in" }, claims());
    answer = "503";
    vi.advanceTimersByTime(31_000); // past the cooldown: an unknown kid makes the set refetch
    expectUnavailable(await rejection(verify(`Bearer ${unknownKid}`)));
    answer = "keys";
    vi.advanceTimersByTime(31_000);
    expect((await rejection(verify(`Bearer ${unknownKid}`))).code).toBe("UNAUTHENTICATED");
  });
});
