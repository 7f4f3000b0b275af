// Sends one fuzz request exactly as generated. fetch() refuses or repairs much
// of what the fuzzer wants to send (lying Content-Length, GET with a body,
// Latin-1 header bytes), so this uses node:http, and a raw socket for requests
// that break HTTP framing itself.
import http from "node:http";
import net from "node:net";

export interface OutgoingRequest {
  /** http://host:port */
  origin: string;
  method: string;
  /** Path and query, already percent-encoded as intended. */
  path: string;
  /** Header values; undefined = not sent. A content-length here is sent as-is (it may lie). */
  headers: Record<string, string | undefined>;
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
  chunked?: boolean;
  timeoutMs: number;
}

export type Outcome =
  | { kind: "response"; status: number; headers: Record<string, string>; body: Buffer }
  | { kind: "no-response"; reason: string };

export function sendRequest(request: OutgoingRequest): Promise<Outcome> {
  const url = new URL(request.origin);
  const headers: Record<string, string> = { connection: "close" };
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
  if (request.body && !request.chunked && headers["content-length"] === undefined) headers["content-length"] = String(request.body.length);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let req: http.ClientRequest;
    try {
      req = http.request({ host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => finish({ kind: "response", status: res.statusCode ?? 0, headers: flatten(res.headers), body: Buffer.concat(chunks) }));
        res.on("error", (error) => finish({ kind: "no-response", reason: `response aborted: ${error.message}` }));
      });
    } catch (error) {
      // Node refused the request itself (e.g. a header value it will not send).
      resolve({ kind: "no-response", reason: `client refused: ${(error as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      finish({ kind: "no-response", reason: `timeout after ${request.timeoutMs} ms` });
    }, request.timeoutMs);
    req.on("error", (error) => finish({ kind: "no-response", reason: (error as NodeJS.ErrnoException).code ?? error.message }));
    if (request.body && request.chunked) {
      // Several chunks, so the server cannot learn the size up front.
      const step = 64 * 1024;
      for (let offset = 0; offset < request.body.length; offset += step) req.write(request.body.subarray(offset, offset + step));
      req.end();
    } else {
      req.end(request.body);
    }
  });
}

function flatten(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

/**
 * Writes `bytes` to a fresh connection verbatim. With `halfCloseAfterMs`, the
 * client stops sending (FIN) after that delay, as a client that died mid-body.
 */
export function sendRaw(origin: string, bytes: Buffer, timeoutMs: number, halfCloseAfterMs?: number): Promise<Outcome> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRawResponse(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on("connect", () => {
      socket.write(bytes);
      if (halfCloseAfterMs !== undefined) setTimeout(() => socket.end(), halfCloseAfterMs);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", finish);
    socket.on("error", finish);
  });
}

function parseRawResponse(raw: Buffer): Outcome {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return { kind: "no-response", reason: raw.length === 0 ? "connection closed without a response" : "incomplete response head" };
  const lines = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
  if (!Number.isInteger(status)) return { kind: "no-response", reason: `not an HTTP response: ${lines[0].slice(0, 60)}` };
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(end + 4);
  // A body that stops short of its framing was cut off with the connection (as
  // the http client's "response aborted"), e.g. once the server gave up on a
  // client that died mid-request: a drop, not a body to judge.
  const cutOff: Outcome = { kind: "no-response", reason: "response cut off mid-body" };
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const dechunked = dechunk(body);
    if (!dechunked.complete) return cutOff;
    body = dechunked.body;
  } else if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (body.length < length) return cutOff;
    body = body.subarray(0, length);
  }
  return { kind: "response", status, headers, body };
}

/** The chunks' bytes, and whether the terminating zero-size chunk arrived. */
function dechunk(body: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = body.indexOf("\r\n", offset);
    if (lineEnd < 0) return { body: Buffer.concat(parts), complete: false };
    const size = parseInt(body.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size)) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) return { body: Buffer.concat(parts), complete: true };
    if (lineEnd + 2 + size > body.length) return { body: Buffer.concat(parts), complete: false };
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}
