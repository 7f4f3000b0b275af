// Whether a TCP port can be listened on, checked before a server is started on
// it: a readiness probe would take another server already on that port for the
// one just started.
import net from "node:net";

export async function portIsFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Throws, naming the variable that chooses the port, when `port` is taken on `host`. */
export async function assertPortFree(port: number, host: string, variable: string, what: string): Promise<void> {
  if (await portIsFree(port, host)) return;
  throw new Error(`${what}: port ${port} on ${host} is in use (another \`npm start\`?); stop it or choose another port with ${variable}`);
}
