// The body rules every JSON route shares (api-v1.md): 415 for anything but
// application/json, 400 MALFORMED_JSON for a body that is not JSON, 413 for a
// body over the limit — declared (Content-Length) or streamed chunked without
// one — and 400 VALIDATION_FAILED for unexpected fields. Run against
// POST /v1/sync/batch, or whichever authenticated JSON route the OpenAPI
// document lists when that one is absent; the media-type and encoding rules
// against every body route.
import net from "node:net";
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { releaseWithFeedback, signedCall, WEBHOOK_SECRET } from "../support/releases.ts";
import { type RawAnswer, type SlowRequest, slowRequest } from "../support/slow-request.ts";

const PREFERRED = { method: "POST", path: "/v1/sync/batch" };

interface JsonRoute {
  method: string;
  path: string;
}

interface OpenApiOperation {
  requestBody?: { content?: Record<string, unknown> };
  security?: Record<string, unknown>[];
}

/** The routes that take a JSON body and a user token, from the served OpenAPI document. */
async function findJsonRoutes(): Promise<JsonRoute[]> {
  const doc = (await call<{ paths: Record<string, Record<string, OpenApiOperation>> }>("/v1/openapi.json")).body;
  const candidates: JsonRoute[] = [];
  for (const [rawPath, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.requestBody?.content?.["application/json"] || !operation.security?.some((s) => "bearerAuth" in s)) continue;
      const path = rawPath.replace(/^\/api/, "").replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      candidates.push({ method: method.toUpperCase(), path });
    }
  }
  return candidates;
}

/** One of them: POST /v1/sync/batch where there is one. */
function chooseJsonRoute(candidates: JsonRoute[]): JsonRoute {
  const preferred = candidates.find((c) => c.method === PREFERRED.method && c.path === PREFERRED.path);
  const route = preferred ?? candidates.sort((a, b) => a.path.localeCompare(b.path))[0];
  if (!route) throw new Error("no authenticated JSON-body route is registered yet (expected POST /v1/sync/batch)");
  return route;
}

let routes: JsonRoute[];
let route: JsonRoute;
let user: TestUser;
let maxBodyBytes: number;

beforeAll(async () => {
  routes = await findJsonRoutes();
  route = chooseJsonRoute(routes);
  user = await createTestUser();
  maxBodyBytes = (await call("/v1/meta")).body.limits.max_body_bytes;
});

const send = (rawBody: BodyInit | undefined, headers: Record<string, string>) =>
  call(route.path, { method: route.method, token: user.token, rawBody, headers });

describe("JSON request bodies", () => {
  it("a body that is not JSON → 400 MALFORMED_JSON", async () => {
    const error = expectEnvelope(await send("{\"ops\": [", { "content-type": "application/json" }), 400, "MALFORMED_JSON");
    expect(error.retryable).toBe(false);
  });

  it("a body that is not UTF-8 → 400 MALFORMED_JSON", async () => {
    expectEnvelope(await send(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { "content-type": "application/json" }), 400, "MALFORMED_JSON");
  });

  it("application/json with charset=utf-8 is accepted as JSON", async () => {
    expectEnvelope(await send("not json", { "content-type": "application/json; charset=utf-8" }), 400, "MALFORMED_JSON");
  });

  it.each([
    ["text/plain", "{}"],
    ["application/x-www-form-urlencoded", "a=1"],
    ["multipart/form-data; boundary=x", "--x--"],
    ["application/jsonp", "{}"],
  ])("Content-Type %s → 415 UNSUPPORTED_MEDIA_TYPE", async (type, body) => {
    const error = expectEnvelope(await send(body, { "content-type": type }), 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(error.retryable).toBe(false);
  });

  it("no Content-Type at all → 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    expectEnvelope(await send(new Blob(["{}"]), {}), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("a declared body over the limit → 413 PAYLOAD_TOO_LARGE", async () => {
    const body = JSON.stringify({ pad: "x".repeat(maxBodyBytes) });
    const error = expectEnvelope(await send(body, { "content-type": "application/json" }), 413, "PAYLOAD_TOO_LARGE");
    expect(error.retryable).toBe(false);
  });

  // The body counter would refuse it too, but only after reading max_body_bytes of it: the
  // declared length is judged before a byte of the body is read, on every route (before routing).
  it("a declared Content-Length over the limit → 413 PAYLOAD_TOO_LARGE with no body sent, on the push, every body route and CI's", async () => {
    const others = routes.filter((r) => r.path !== route.path || r.method !== route.method);
    const authorized: Record<string, string> = { Authorization: `Bearer ${user.token}` };
    const targets = [
      ...[route, ...others].map((r) => ({ ...r, headers: authorized })),
      { method: "POST", path: "/v1/releases", headers: {} }, // CI's: nothing signed yet
    ];
    for (const { method, path, headers } of targets) {
      const request = headOnly(path, method, headers, maxBodyBytes + 1);
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const answer = await Promise.race([
          request.answer,
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${method} ${path}: no answer within 5 s: the server waited for the body`)), 5000))),
        ]);
        const error = expectEnvelope(asResponse(answer), 413, "PAYLOAD_TOO_LARGE");
        expect(error.retryable, `${method} ${path}`).toBe(false);
        expect(error.message).toContain(String(maxBodyBytes));
      } finally {
        clearTimeout(timer);
        request.destroy();
      }
    }
  });

  it("a declared Content-Length of exactly the limit is not refused by its declaration: the body is waited for, then read", async () => {
    const request = headOnly(route.path, route.method, { Authorization: `Bearer ${user.token}` }, maxBodyBytes);
    try {
      // A refusal of the declaration comes at once (the test above); nothing comes while the body is missing.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(request.settled()).toBe(false);
      request.write(bodyOfExactlyMax());
      const error = expectEnvelope(asResponse(await request.answer), 400, "VALIDATION_FAILED");
      expect(error.details?.some((d) => d.field === "/unexpected_field" && d.code === "unexpected_field")).toBe(true);
    } finally {
      request.destroy();
    }
  });

  it("a chunked body without Content-Length over the limit → 413 PAYLOAD_TOO_LARGE", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x20); // JSON whitespace
    let sent = 0;
    const total = maxBodyBytes + 1;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const piece = chunk.subarray(0, Math.min(chunk.byteLength, total - sent));
        sent += piece.byteLength;
        controller.enqueue(piece);
      },
    });
    expectEnvelope(await send(stream, { "content-type": "application/json" }), 413, "PAYLOAD_TOO_LARGE");
  });

  it("a body of exactly the limit is read, declared or chunked (then judged on its content, not its size)", async () => {
    const body = bodyOfExactlyMax();
    const declared = expectEnvelope(await send(body, { "content-type": "application/json" }), 400, "VALIDATION_FAILED");
    expect(declared.details?.some((d) => d.field === "/unexpected_field" && d.code === "unexpected_field")).toBe(true);
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.byteLength; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
        controller.close();
      },
    });
    const chunked = expectEnvelope(await send(stream, { "content-type": "application/json" }), 400, "VALIDATION_FAILED");
    expect(chunked.details?.some((d) => d.field === "/unexpected_field" && d.code === "unexpected_field")).toBe(true);
  });

  it("a body shorter than its Content-Length (the client stops sending) → 400 MALFORMED_JSON", async () => {
    const url = new URL(`${stack.apiUrl}${route.path}`);
    const head = [
      `${route.method} ${url.pathname} HTTP/1.1`,
      `Host: ${url.host}`,
      `Authorization: Bearer ${user.token}`,
      "Content-Type: application/json",
      "Content-Length: 200",
      "Connection: close",
      "",
      "",
    ].join("\r\n");
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.write(head + "{\"ops\": [");
        socket.end(); // half-close: no more body will come
      });
      let received = "";
      socket.on("data", (d) => (received += d));
      socket.on("end", () => resolve(received));
      socket.on("error", reject);
      socket.setTimeout(15_000, () => reject(new Error("no answer within 15 s")));
    });
    const [statusLine] = raw.split("\r\n");
    expect(statusLine).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4).replace(/^[0-9a-f]+\r\n/i, "").replace(/\r\n0\r\n\r\n$/, ""));
    expect(body.error.code).toBe("MALFORMED_JSON");
  });

  it("the body rules come after authentication: no token → 401 even for a malformed body", async () => {
    const response = await call(route.path, { method: route.method, rawBody: "{", headers: { "content-type": "application/json" } });
    expectEnvelope(response, 401, "UNAUTHENTICATED");
  });
});

/**
 * A request head and the first bytes of a body it declares longer, sent without the rest;
 * resolves with what comes back.
 */
function sendHeadOnly(path: string, method: string, headers: Record<string, string>): Promise<string> {
  const url = new URL(`${stack.apiUrl}${path}`);
  const head = [
    `${method} ${url.pathname} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "Content-Length: 200",
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  return new Promise<string>((resolve, reject) => {
    // The body never completes: only an answer given before reading it arrives within the timeout.
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(head + "{\"ops\""));
    let received = "";
    socket.on("data", (d) => {
      received += d;
      if (received.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on("error", reject);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error("no answer within 5 s: the server waited for the body"));
    });
  });
}

/** A JSON request head declaring `contentLength` bytes, and not one byte of the body until written. */
function headOnly(path: string, method: string, headers: Record<string, string>, contentLength: number): SlowRequest {
  return slowRequest({ apiUrl: stack.apiUrl, method, path, headers, contentLength, first: "", dripMs: 0 });
}

/** A raw answer as expectEnvelope takes one. */
function asResponse(answer: RawAnswer): ApiResponse {
  return { status: answer.status, headers: new Headers(answer.headers), body: answer.body, text: JSON.stringify(answer.body) };
}

/** A body of exactly max_body_bytes, well-formed JSON that the schema refuses for its one field. */
function bodyOfExactlyMax(): string {
  const frame = JSON.stringify({ unexpected_field: "" });
  const body = JSON.stringify({ unexpected_field: "x".repeat(maxBodyBytes - Buffer.byteLength(frame)) });
  expect(Buffer.byteLength(body)).toBe(maxBodyBytes);
  return body;
}

describe("Content-Type: one rule for what is JSON (RFC 9110 §5.6.6: whitespace around ';')", () => {
  // A client that follows docs/errors.md retries a 500 forever: these were 500 INTERNAL on every body route.
  const LEGAL = [
    "application/json ; charset=utf-8",
    "application/json ;charset=UTF-8",
    "application/json\t; charset=utf-8",
    "Application/JSON;charset=\"utf-8\"",
    "application/json;",
  ];

  it.each(LEGAL)("%j is JSON on every body route: the body is read (400 MALFORMED_JSON), never 415 or 500", async (type) => {
    expect(routes.length).toBeGreaterThanOrEqual(5);
    for (const { method, path } of routes) {
      const response = await call(path, { method, token: user.token, rawBody: "not json", headers: { "content-type": type } });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(400);
      expect(expectEnvelope(response, 400, "MALFORMED_JSON").retryable).toBe(false);
    }
    // CI's, signed: a body of {} is read and judged by the schema.
    const published = await signedCall("/v1/releases", {}, { headers: { "content-type": type } });
    expectEnvelope(published, 400, "VALIDATION_FAILED");
  });

  it.each([
    "application/json; charset = utf-8",
    "application/json; charset =utf-8",
    "application/json; charset= utf-8",
    "application/json; charset=latin1",
    "application/json; profile=x",
  ])("%j is not JSON as this API takes it: 415 UNSUPPORTED_MEDIA_TYPE on every body route", async (type) => {
    for (const { method, path } of routes) {
      const response = await call(path, { method, token: user.token, rawBody: "{}", headers: { "content-type": type } });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(415);
      expect(expectEnvelope(response, 415, "UNSUPPORTED_MEDIA_TYPE").retryable).toBe(false);
    }
    expectEnvelope(await signedCall("/v1/releases", {}, { headers: { "content-type": type } }), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("a short header of many ';' that is not JSON is refused at once on every body route, also before CI's signature is checked", async () => {
    // The pattern once let the whitespace between two ';' match in two places: a 71-byte header
    // backtracked 39 s, holding every request of the server; this one would never have ended.
    const type = `application/json${";  ".repeat(40)}x`;
    for (const { method, path } of routes) {
      expectEnvelope(await call(path, { method, token: user.token, rawBody: "{}", headers: { "content-type": type } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    }
    expectEnvelope(await signedCall("/v1/releases", {}, { headers: { "content-type": type } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const legal = `application/json${" ; ".repeat(40)}charset=utf-8`;
    expectEnvelope(await send("not json", { "content-type": legal }), 400, "MALFORMED_JSON");
  });
});

describe("Content-Encoding: bodies are taken as sent, uncoded (RFC 9110 §8.4, RFC 7694)", () => {
  const body = JSON.stringify({ ops: [] });

  it("a gzip body → 415 UNSUPPORTED_MEDIA_TYPE with Accept-Encoding: identity on every body route, not a misleading 400", async () => {
    for (const { method, path } of routes) {
      const response = await call(path, {
        method,
        token: user.token,
        rawBody: gzipSync(body),
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
      });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(415);
      expect(expectEnvelope(response, 415, "UNSUPPORTED_MEDIA_TYPE").retryable).toBe(false);
      expect(response.headers.get("accept-encoding")).toBe("identity");
    }
    const published = await signedCall("/v1/releases", {}, { headers: { "content-encoding": "gzip" } });
    expectEnvelope(published, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(published.headers.get("accept-encoding")).toBe("identity");
  });

  it.each(["br", "GZIP", "deflate", "identity, gzip", "x-custom"])("Content-Encoding: %s on a plain body is not read as plain → 415", async (coding) => {
    const response = await send(body, { "content-type": "application/json", "content-encoding": coding });
    expectEnvelope(response, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(response.headers.get("accept-encoding")).toBe("identity");
  });

  it.each(["identity", "IDENTITY", " identity "])("Content-Encoding: %j is the body as sent", async (coding) => {
    expectEnvelope(await send("not json", { "content-type": "application/json", "content-encoding": coding }), 400, "MALFORMED_JSON");
  });

  it("a request without a body has nothing to decode: CI's signed read with a Content-Encoding is answered", async () => {
    const id = await releaseWithFeedback("Crashes on start");
    const read = await signedCall(`/v1/releases/${id}/feedback`, undefined, { method: "GET", headers: { "content-encoding": "gzip" } });
    expect(read.status, read.text).toBe(200);
    expect(read.body.feedback).toEqual([expect.objectContaining({ body: "Crashes on start" })]);
  });

  it.each([
    ["no Content-Length", undefined],
    ["Content-Length: 0", new Uint8Array(0)],
  ])("a POST without a body (%s) has nothing to decode: the optional-body route is answered", async (_, rawBody) => {
    const throwaway = await createTestUser();
    const response = await call("/v1/users/me/deletion", { method: "POST", token: throwaway.token, rawBody, headers: { "content-encoding": "gzip" } });
    expect(response.status, response.text).toBe(202);
  });

  it("is refused before the body is read: the answer comes while the body is still missing", async () => {
    const raw = await sendHeadOnly(route.path, route.method, {
      Authorization: `Bearer ${user.token}`,
      "Content-Type": "application/json",
      "Content-Encoding": "gzip",
    });
    expect(raw).toMatch(/^HTTP\/1\.1 415 /);
    expect(raw).toMatch(/\r\naccept-encoding: identity\r\n/i);
  });
});

describe("one order of a body's checks on every body route (docs/errors.md, Order of checks)", () => {
  // CI's headers, well-formed and fresh (what is checked before the body); the signature is over
  // another payload, which only the body could tell.
  const webhookHeaders = () => {
    const id = `msg_${randomUUID()}`;
    const now = new Date();
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(WEBHOOK_SECRET).sign(id, now, "another payload"),
    };
  };

  it("a Content-Type that is not JSON → 415 before the body is read, on every body route and CI's writes", async () => {
    for (const { method, path } of routes) {
      const raw = await sendHeadOnly(path, method, { Authorization: `Bearer ${user.token}`, "Content-Type": "text/plain" })
        .catch((error: Error) => error.message);
      expect(raw, `${method} ${path}`).toMatch(/^HTTP\/1\.1 415 /);
    }
    for (const method of ["POST", "PATCH"]) {
      const path = method === "POST" ? "/v1/releases" : "/v1/releases/00000000-0000-4000-8000-000000000000";
      const raw = await sendHeadOnly(path, method, { ...webhookHeaders(), "Content-Type": "text/plain" }).catch((error: Error) => error.message);
      expect(raw, `${method} ${path}`).toMatch(/^HTTP\/1\.1 415 /);
    }
  });

  it("the Content-Type is judged before the Content-Encoding: a body wrong in both is told its media type", async () => {
    const headers = { "content-type": "text/plain", "content-encoding": "gzip" };
    for (const { method, path } of routes) {
      const response = await call(path, { method, token: user.token, rawBody: gzipSync("{}"), headers });
      const error = expectEnvelope(response, 415, "UNSUPPORTED_MEDIA_TYPE");
      expect(error.message, `${method} ${path}`).toBe("send the body as application/json");
    }
    const published = await signedCall("/v1/releases", {}, { headers });
    expect(expectEnvelope(published, 415, "UNSUPPORTED_MEDIA_TYPE").message).toBe("send the body as application/json");
  });
});
