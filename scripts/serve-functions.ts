// Serves the edge functions with the real Deno runtime at the URL shape of
// `supabase functions serve`: http://127.0.0.1:54321/functions/v1/<function>/...
// The edge runtime hands a function the path after /functions/v1 (so `api`
// sees /api/v1/meta); this gateway does the same. Run with Deno:
//   deno run --config functions/api/deno.json --allow-net --allow-env --allow-read scripts/serve-functions.ts
import { createApp } from "../functions/api/app.ts";
import { loadStartUpConfig } from "../functions/api/lib/config.ts";
import { keepServingOnUncaughtErrors } from "../functions/api/lib/keep-serving.ts";
import { requestIdFor } from "../functions/api/lib/middleware.ts";
import { startOrExit } from "../functions/api/lib/start-up.ts";
import { serveSignedObject } from "../functions/api/releases/local-artifact-store.ts";
import { intSetting, TCP_PORT } from "../functions/_shared/int-setting.ts";
import { urlHost } from "./lib/url-host.ts";

const env = Deno.env.toObject();
const port = await startOrExit(() =>
  env.TIDESYNC_PORT ? intSetting(env, "TIDESYNC_PORT", 54321, TCP_PORT) : intSetting(env, "PORT", 54321, TCP_PORT)
);
const hostname = env.TIDESYNC_HOST || "127.0.0.1";

// Supabase Storage stand-in for artifact downloads (TIDESYNC_ARTIFACT_STORE=local):
// the signed links the api function issues point here, at Storage's URL shape
// /storage/v1/object/sign/<bucket>/<path>?token=…, and are served from
// TIDESYNC_LOCAL_STORAGE_DIR/<bucket>/<path>.
const STORAGE_PREFIX = "/storage/v1";
const localStorage = env.TIDESYNC_ARTIFACT_STORE === "local" && env.TIDESYNC_LOCAL_STORAGE_DIR
  ? { dir: env.TIDESYNC_LOCAL_STORAGE_DIR.replace(/\/+$/, ""), secret: env.TIDESYNC_LOCAL_STORAGE_SECRET ?? "" }
  : null;
if (localStorage && !env.TIDESYNC_LOCAL_STORAGE_URL) env.TIDESYNC_LOCAL_STORAGE_URL = `http://${urlHost(hostname)}:${port}${STORAGE_PREFIX}`;

async function readLocalObject(bucket: string, path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(`${localStorage!.dir}/${bucket}/${path}`);
  } catch {
    return null;
  }
}

const api = await startOrExit(async () => createApp(await loadStartUpConfig(env)));
const functions: Record<string, { fetch: (request: Request) => Response | Promise<Response>; allowedMethodsAt: (url: string) => string[] }> = {
  api: { fetch: api.app.fetch, allowedMethodsAt: api.allowedMethodsAt },
};

const PREFIX = "/functions/v1/";

function gatewayError(request: Request, status: 404 | 405, code: "NOT_FOUND" | "METHOD_NOT_ALLOWED", message: string, allowed?: string[]): Response {
  const requestId = requestIdFor(request.headers.get("x-request-id"));
  return Response.json(
    { error: { code, message, retryable: false, request_id: requestId } },
    { status, headers: { "Cache-Control": "no-store", "X-Request-Id": requestId, ...(allowed ? { Allow: allowed.join(", ") } : {}) } },
  );
}

const notFound = (request: Request) => gatewayError(request, 404, "NOT_FOUND", "no such function");

// Listening is part of start-up too: a port in use (AddrInUse) ends the process.
const server = await startOrExit(() => Deno.serve({
  port,
  hostname,
  onListen: ({ hostname, port }) => {
    console.log(JSON.stringify({ level: "info", msg: "functions listening", url: `http://${hostname}:${port}${PREFIX}` }));
  },
}, (request) => {
  const url = new URL(request.url);
  if (localStorage && url.pathname.startsWith(`${STORAGE_PREFIX}/`)) {
    if (request.method !== "GET") return gatewayError(request, 405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed`, ["GET"]);
    return serveSignedObject(url.pathname.slice(STORAGE_PREFIX.length), url.searchParams.get("token"), {
      secret: localStorage.secret,
      readObject: readLocalObject,
    });
  }
  if (!url.pathname.startsWith(PREFIX)) return notFound(request);
  const name = url.pathname.slice(PREFIX.length).split("/")[0];
  const handler = functions[name];
  if (!handler) return notFound(request);
  url.pathname = url.pathname.slice(PREFIX.length - 1);
  let forwarded: Request;
  try {
    forwarded = new Request(url, request);
  } catch {
    // The Fetch standard forbids some methods (TRACE, TRACK) in a Request, and would make `get` a
    // GET (HTTP methods are case-sensitive; Deno then refuses it the body it reads one as having):
    // the function cannot be asked, so the gateway answers as it would, Allow and all.
    const allowed = handler.allowedMethodsAt(url.href);
    return allowed.length > 0
      ? gatewayError(request, 405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed here; use ${allowed.join(", ")}`, allowed)
      : gatewayError(request, 404, "NOT_FOUND", "no such route");
  }
  return handler.fetch(forwarded);
}));

// One process serves every request here, so one uncaught error must not take
// the whole local stack down (the same guard the deployed entry point uses),
// once it has started (lib/start-up.ts).
keepServingOnUncaughtErrors();

// Graceful stop: finish in-flight requests, then exit.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    server.shutdown().finally(() => Deno.exit(0));
  });
}
