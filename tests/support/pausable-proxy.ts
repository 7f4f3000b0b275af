// A TCP proxy the test owns, in front of the test database: `pause()` freezes
// every connection (bytes are held, nothing is answered, sockets stay open),
// as a database stopped with SIGSTOP looks to its clients; `resume()` lets the
// held bytes through and traffic flow again.
import net from "node:net";

export interface PausableProxy {
  port: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

interface Direction {
  from: net.Socket;
  to: net.Socket;
  held: Buffer[];
}

export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  let paused = false;
  const directions = new Set<Direction>();
  const sockets = new Set<net.Socket>();

  const forward = (direction: Direction) => {
    direction.from.on("data", (chunk: Buffer) => {
      if (paused) direction.held.push(chunk);
      else direction.to.write(chunk);
    });
  };

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
    const up: Direction = { from: client, to: upstream, held: [] };
    const down: Direction = { from: upstream, to: client, held: [] };
    for (const direction of [up, down]) {
      directions.add(direction);
      direction.from.on("close", () => directions.delete(direction));
      forward(direction);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    port: (server.address() as net.AddressInfo).port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const direction of directions) {
        for (const chunk of direction.held.splice(0)) direction.to.write(chunk);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
