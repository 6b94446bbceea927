import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP relay in front of a server whose open connections a test can cut at any moment,
 * as a network change or a restarted load balancer does. New connections go through
 * again at once.
 */
export interface CuttableProxy {
  url: string;
  /** Destroys every connection open now, both sides. */
  cut(): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
  };
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    track(client);
    track(upstream);
    upstream.connect(Number(port), hostname, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut() {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
