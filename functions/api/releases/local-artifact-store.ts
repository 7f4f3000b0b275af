// The local stack's artifact store (Supabase Storage cannot run here). Links
// have the shape and token of Storage's signed URLs —
// `<storage>/object/sign/<bucket>/<path>?token=<HS256 JWT {url: "<bucket>/<path>", iat, exp}>` —
// signed with a local secret instead of the project's JWT secret, and
// scripts/serve-functions.ts serves them from a local directory with
// serveSignedObject(). A link works until it expires and only for the object
// it names: any change to the path or the token is refused, as Storage does.
// docs/supabase-standin.md says where this ends.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { ArtifactStore } from "./artifact-store.ts";

export const SIGNED_OBJECT_PREFIX = "/object/sign/";

function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

function secretKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export function createLocalArtifactStore(options: { publicUrl: string; secret: string; bucket: string }): ArtifactStore {
  const key = secretKey(options.secret);
  return {
    async signedLinks(paths, expiresInSeconds) {
      const now = Math.floor(Date.now() / 1000);
      return await Promise.all(paths.map(async (path) => {
        const objectUrl = `${options.bucket}/${path}`;
        const token = await new SignJWT({ url: objectUrl })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setIssuedAt(now)
          .setExpirationTime(now + expiresInSeconds)
          .sign(key);
        return {
          url: `${options.publicUrl}${SIGNED_OBJECT_PREFIX}${encodeURIComponent(options.bucket)}/${encodePath(path)}?token=${token}`,
          expiresAt: new Date((now + expiresInSeconds) * 1000),
        };
      }));
    },
  };
}

/** Storage's error body (statusCode is a string there too). */
function storageError(status: 400 | 404, error: string, message: string): Response {
  return Response.json({ statusCode: String(status), error, message }, { status, headers: { "Cache-Control": "no-store" } });
}

/**
 * Answers a GET of `<prefix>/object/sign/<bucket>/<path>?token=…` (the part
 * after the storage base path is `signedPath`): the object's bytes when the
 * token is valid, unexpired and names exactly this object.
 */
export async function serveSignedObject(
  signedPath: string,
  token: string | null,
  options: { secret: string; readObject: (bucket: string, path: string) => Promise<Uint8Array | null> },
): Promise<Response> {
  if (!signedPath.startsWith(SIGNED_OBJECT_PREFIX)) return storageError(404, "not_found", "Object not found");
  let objectUrl: string;
  try {
    objectUrl = signedPath.slice(SIGNED_OBJECT_PREFIX.length).split("/").map(decodeURIComponent).join("/");
  } catch {
    return storageError(400, "InvalidRequest", "Invalid object path");
  }
  if (!token) return storageError(400, "InvalidJWT", "Querystring must have required property 'token'");
  try {
    const { payload } = await jwtVerify(token, secretKey(options.secret), { algorithms: ["HS256"] });
    if (payload.url !== objectUrl) return storageError(400, "InvalidSignature", "The url do not match the signature");
  } catch (error) {
    const message = error instanceof joseErrors.JWTExpired ? "jwt expired" : "invalid signature";
    return storageError(400, "InvalidJWT", message);
  }
  const slash = objectUrl.indexOf("/");
  const bucket = objectUrl.slice(0, slash);
  const path = objectUrl.slice(slash + 1);
  if (slash <= 0 || path === "" || path.split("/").some((s) => s === "" || s === "." || s === "..")) {
    return storageError(400, "InvalidRequest", "Invalid object path");
  }
  const bytes = await options.readObject(bucket, path);
  if (!bytes) return storageError(404, "not_found", "Object not found");
  return new Response(bytes as BodyInit, {
    status: 200,
    headers: { "Content-Type": "application/octet-stream", "Content-Length": String(bytes.byteLength), "Cache-Control": "no-cache" },
  });
}
