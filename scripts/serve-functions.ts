// Serves the edge functions with the real Deno runtime at the URL shape of
// `supabase functions serve`: http://127.0.0.1:54321/functions/v1/<function>/...
// The edge runtime hands a function the path after /functions/v1 (so `api`
// sees /api/v1/meta); this gateway does the same. Run with Deno:
//   deno run --config functions/api/deno.json --allow-net --allow-env --allow-read scripts/serve-functions.ts
import { createApp } from "../functions/api/app.ts";
import { loadConfig } from "../functions/api/lib/config.ts";
import { keepServingOnUncaughtErrors } from "../functions/api/lib/keep-serving.ts";

// One process serves every request here, so one uncaught error must not take
// the whole local stack down (the same guard the deployed entry point uses).
keepServingOnUncaughtErrors();

const env = Deno.env.toObject();
const port = Number(env.TIDESYNC_PORT ?? env.PORT ?? 54321);
const hostname = env.TIDESYNC_HOST ?? "127.0.0.1";

const functions: Record<string, (request: Request) => Response | Promise<Response>> = {
  api: createApp(loadConfig(env)).app.fetch,
};

const PREFIX = "/functions/v1/";

function gatewayError(status: 404 | 405, code: "NOT_FOUND" | "METHOD_NOT_ALLOWED", message: string): Response {
  const requestId = crypto.randomUUID();
  return Response.json(
    { error: { code, message, retryable: false, request_id: requestId } },
    { status, headers: { "Cache-Control": "no-store", "X-Request-Id": requestId } },
  );
}

const notFound = () => gatewayError(404, "NOT_FOUND", "no such function");

const server = Deno.serve({
  port,
  hostname,
  onListen: ({ hostname, port }) => {
    console.log(JSON.stringify({ level: "info", msg: "functions listening", url: `http://${hostname}:${port}${PREFIX}` }));
  },
}, (request) => {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(PREFIX)) return notFound();
  const name = url.pathname.slice(PREFIX.length).split("/")[0];
  const handler = functions[name];
  if (!handler) return notFound();
  url.pathname = url.pathname.slice(PREFIX.length - 1);
  let forwarded: Request;
  try {
    forwarded = new Request(url, request);
  } catch {
    // The Fetch standard forbids some methods (TRACE, CONNECT, TRACK) in a Request.
    return gatewayError(405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed`);
  }
  return handler(forwarded);
});

// Graceful stop: finish in-flight requests, then exit.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    server.shutdown().finally(() => Deno.exit(0));
  });
}
