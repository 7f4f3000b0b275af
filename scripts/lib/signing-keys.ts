// Signing keys in the shape a Supabase project has them: an ES256 key pair
// (the function gets only the public JWKS) and a legacy HS256 secret.
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { randomBytes, randomUUID } from "node:crypto";

export interface SigningKeys {
  /** Private ES256 key as a JWK (with kid), used to sign tokens. */
  privateJwk: JWK;
  /** What the function gets as SUPABASE_JWKS. */
  publicJwks: { keys: JWK[] };
  /** Legacy shared secret (SUPABASE_JWT_SECRET). */
  hsSecret: string;
}

export async function createSigningKeys(): Promise<SigningKeys> {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: "ES256" };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig", key_ops: ["verify"] };
  return { privateJwk, publicJwks: { keys: [publicJwk] }, hsSecret: randomBytes(32).toString("base64url") };
}
