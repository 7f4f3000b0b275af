// A request whose body arrives slowly, over a real socket (node:net): the
// head and the first body bytes at once, then one byte per `dripMs` for as
// long as the server lets it, the way a client on a bad link (or an attacker
// holding connections open) sends. Resolves with the server's answer as soon
// as it is complete, however the connection ends.
import net from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** From the first byte sent to the complete answer. */
  elapsedMs: number;
}

export interface SlowRequest {
  answer: Promise<RawAnswer>;
  /** Whether the answer has come. */
  settled(): boolean;
  /** Sends more of the body now (a body withheld with `first: ""` and no drip, say). */
  write(data: string | Uint8Array): void;
  /** Stops sending and closes the socket (an unanswered request rejects). */
  destroy(): void;
}

export interface SlowRequestOptions {
  /** Function URL the path is appended to (the stack's or a server's apiUrl). */
  apiUrl: string;
  method?: string;
  /** From /v1/ on. */
  path: string;
  headers?: Record<string, string>;
  /** Declared Content-Length (default 1,000,000: far more than will ever be sent). */
  contentLength?: number;
  /** Body bytes sent with the head (default "{"). */
  first?: string;
  /** One more body byte (a space) every dripMs; 0 sends nothing after `first`. */
  dripMs?: number;
}

/** Parses a complete HTTP/1.1 answer out of `raw`, or undefined while more is to come. */
function parseAnswer(raw: Buffer): Omit<RawAnswer, "elapsedMs"> | undefined {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine, ...lines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.subarray(end + 4);
  let text: string;
  if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (rest.length < length) return undefined;
    text = rest.subarray(0, length).toString("utf8");
  } else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      if (lineEnd < 0) return undefined;
      const size = parseInt(rest.subarray(0, lineEnd).toString("latin1"), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    text = Buffer.concat(parts).toString("utf8");
  } else {
    return undefined;
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

export function slowRequest(options: SlowRequestOptions): SlowRequest {
  const url = new URL(options.apiUrl);
  const head = [
    `${options.method ?? "POST"} ${url.pathname}${options.path} HTTP/1.1`,
    `Host: ${url.host}`,
    "Content-Type: application/json",
    `Content-Length: ${options.contentLength ?? 1_000_000}`,
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ].join("\r\n");
  let settled = false;
  let drip: ReturnType<typeof setInterval> | undefined;
  const socket = net.connect(Number(url.port), url.hostname);
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    let started = 0;
    let received = Buffer.alloc(0);
    const finish = (error?: Error) => {
      clearInterval(drip);
      if (settled) return;
      const parsed = parseAnswer(received);
      if (parsed) {
        settled = true;
        resolve({ ...parsed, elapsedMs: performance.now() - started });
        socket.destroy();
      } else if (error) {
        settled = true;
        reject(error);
      }
    };
    socket.on("connect", () => {
      started = performance.now();
      socket.write(head + (options.first ?? "{"));
      if (options.dripMs) drip = setInterval(() => socket.writable && socket.write(" "), options.dripMs);
    });
    socket.on("data", (data) => {
      received = Buffer.concat([received, data]);
      finish();
    });
    // The server may close (or reset) the connection right after its answer, while bytes are still being sent.
    socket.on("error", (error) => finish(error));
    socket.on("close", () => finish(new Error(`the connection closed without a complete answer: ${JSON.stringify(received.toString("latin1").slice(0, 200))}`)));
  });
  answer.catch(() => {});
  return {
    answer,
    settled: () => settled,
    write: (data) => void socket.write(data),
    destroy() {
      clearInterval(drip);
      socket.destroy();
    },
  };
}
