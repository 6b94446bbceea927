import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP relay in front of a server whose open connections a test can cut at any moment,
 * as a network change or a restarted load balancer does. New connections go through
 * again at once, unless the relay is told to refuse them (the server is down).
 */
export interface CuttableProxy {
  url: string;
  /** Destroys every connection open now, both sides. */
  cut(): void;
  /**
   * `true`: cuts every open connection and resets each new one as it arrives, as a server that
   * is down does (the client sees its connection fail at once); `false`: relays again.
   */
  refuse(refusing: boolean): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let refusing = false;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
  };
  const cut = () => {
    for (const socket of open) socket.destroy();
  };
  const server: Server = createServer((client) => {
    if (refusing) {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
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
    cut,
    refuse(value) {
      refusing = value;
      if (value) cut();
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
