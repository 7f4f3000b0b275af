// The body of an Expo Updates protocol v1 response
// (docs.expo.dev/technical-specs/expo-updates-1): multipart/mixed parts
// (`manifest` or `directive`, plus `extensions`), each optionally code-signed
// with RSA PKCS#1 v1.5 SHA-256 in an `expo-signature` structured header.
import type { OtaAsset, Release } from "../../_shared/schemas/releases.ts";
import type { DownloadLink } from "./download-links.ts";
import type { ReleaseRow } from "./release-store.ts";

export const EXPO_SIGNATURE_ALGORITHM = "rsa-v1_5-sha256";

export interface ExpoPart {
  name: "manifest" | "directive" | "extensions";
  json: unknown;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The protocol's asset hash: base64url (no padding) of the SHA-256 bytes, from the stored hex. */
export function expoAssetHash(sha256Hex: string): string {
  const bytes = new Uint8Array(sha256Hex.match(/../g)!.map((pair) => parseInt(pair, 16)));
  return base64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

/** PKCS#1 RSAPrivateKey → PKCS#8 PrivateKeyInfo (WebCrypto imports only the latter). */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  // version 0, AlgorithmIdentifier { rsaEncryption, NULL }
  const header = [0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
  const octetString = [0x04, ...derLength(pkcs1.length)];
  const bodyLength = header.length + octetString.length + pkcs1.length;
  return new Uint8Array([0x30, ...derLength(bodyLength), ...header, ...octetString, ...pkcs1]);
}

/**
 * The signing key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) or PKCS#1
 * (`BEGIN RSA PRIVATE KEY`, what `npx expo-updates codesigning:generate` writes).
 */
export function importSigningKey(privateKeyPem: string): Promise<CryptoKey> {
  const pkcs1 = privateKeyPem.includes("BEGIN RSA PRIVATE KEY");
  const der = atob(privateKeyPem.replace(/-----(BEGIN|END) (RSA )?PRIVATE KEY-----/g, "").replace(/\s+/g, ""));
  const bytes = new Uint8Array(der.length);
  for (let i = 0; i < der.length; i++) bytes[i] = der.charCodeAt(i);
  const pkcs8 = pkcs1 ? pkcs1ToPkcs8(bytes) : bytes;
  return crypto.subtle.importKey("pkcs8", pkcs8 as BufferSource, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
}

/** `expo-signature` of one part body: sig, keyid and alg as a structured-header dictionary. */
export async function expoSignature(key: CryptoKey, keyId: string, body: string): Promise<string> {
  const signature = new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(body) as BufferSource));
  return `sig="${base64(signature)}", keyid="${keyId}", alg="${EXPO_SIGNATURE_ALGORITHM}"`;
}

/** multipart/mixed with the given parts, each signed when `signer` is given. */
export async function multipartMixed(
  parts: readonly ExpoPart[],
  signer: ((body: string) => Promise<string>) | null,
): Promise<{ contentType: string; body: string }> {
  const boundary = `tidesync-${crypto.randomUUID()}`;
  let body = "";
  for (const part of parts) {
    const text = JSON.stringify(part.json);
    body += `--${boundary}\r\n`;
    body += `content-type: application/json; charset=utf-8\r\n`;
    body += `content-disposition: form-data; name="${part.name}"\r\n`;
    if (signer) body += `expo-signature: ${await signer(text)}\r\n`;
    body += `\r\n${text}\r\n`;
  }
  body += `--${boundary}--\r\n`;
  return { contentType: `multipart/mixed; boundary=${boundary}`, body };
}

interface ManifestAsset {
  hash: string;
  key: string;
  contentType: string;
  fileExtension?: string;
  url: string;
}

function manifestAsset(sha256: string, contentType: string, fileExtension: string | undefined, link: DownloadLink): ManifestAsset {
  return { hash: expoAssetHash(sha256), key: sha256, contentType, ...(fileExtension ? { fileExtension } : {}), url: link.url };
}

/**
 * The manifest of an OTA release, served under `served`'s id and createdAt (the release's own, or
 * those of its republication after a rollback: plan-expo-update.ts); `links` holds the launch
 * asset's link first, then one per asset. `expoClient`, the app config published with it, is
 * extra.expoClient, where expo-constants reads Constants.expoConfig in an app running a downloaded
 * update (Expo's reference server sends it there too); signed with the rest of the manifest part.
 */
export function expoManifest(
  release: ReleaseRow,
  links: readonly DownloadLink[],
  served: { id: string; createdAt: Date },
  expoClient: Release["expo_client"],
) {
  const [launchLink, ...assetLinks] = links;
  return {
    id: served.id,
    createdAt: served.createdAt.toISOString(),
    runtimeVersion: release.runtime_version,
    launchAsset: manifestAsset(release.artifact_sha256, release.artifact_content_type, ".bundle", launchLink),
    assets: release.assets.map((asset: OtaAsset, i) => manifestAsset(asset.sha256, asset.content_type, asset.file_extension, assetLinks[i])),
    metadata: {},
    extra: {
      ...(expoClient ? { expoClient } : {}),
      tidesync: { release_id: release.id, version: release.version, build_number: release.build_number, channel: release.channel },
    },
  };
}
