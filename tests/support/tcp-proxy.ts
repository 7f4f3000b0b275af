// A TCP proxy the test owns, in front of the test database: each client
// connection gets its own upstream connection, and `onPair` decides what
// passes between them. Either side closing closes both; close() ends all.
import net from "node:net";

export interface TcpProxy {
  port: number;
  close(): Promise<void>;
}

export async function startTcpProxy(
  target: { host: string; port: number },
  onPair: (client: net.Socket, upstream: net.Socket) => void,
): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    onPair(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
