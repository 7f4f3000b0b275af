// Serves web/ the way any static host would, plus the two files a deployment
// adds beside the page: config.js (the project's URL and anon key) and
// vendor/supabase.js (supabase-js's UMD build, from node_modules).
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { ROOT } from "../../scripts/lib/paths.ts";

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };

export interface StaticSite {
  url: string;
  stop(): Promise<void>;
}

export async function serveWebPage(dir: string, config: { supabaseUrl: string; supabaseAnonKey: string }): Promise<StaticSite> {
  const root = path.join(ROOT, "web", dir);
  const supabaseJs = path.join(ROOT, "node_modules", "@supabase", "supabase-js", "dist", "umd", "supabase.js");
  const server = http.createServer(async (request, response) => {
    const pathname = new URL(request.url ?? "/", "http://localhost").pathname;
    try {
      let body: string | Buffer;
      if (pathname === "/config.js") body = `window.TIDESYNC_CONFIG = ${JSON.stringify(config)};\n`;
      else if (pathname === "/vendor/supabase.js") body = await readFile(supabaseJs);
      else {
        const file = path.join(root, pathname === "/" ? "index.html" : pathname);
        if (!file.startsWith(root + path.sep)) throw new Error("outside the site");
        body = await readFile(file);
      }
      response.writeHead(200, { "content-type": TYPES[path.extname(pathname) || ".html"] ?? "application/octet-stream" });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
