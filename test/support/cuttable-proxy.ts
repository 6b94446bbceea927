import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP relay in front of a server whose open connections a test can cut at any moment,
 * as a network change or a restarted load balancer does. New connections go through
 * again at once, unless the relay is told to refuse them (the server is down). It can also
 * partition the network for a while: nothing crosses in either direction and new connections
 * get no answer until it heals, when what was sent meanwhile goes through, as TCP delivers it
 * after a partition shorter than its own timeouts.
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
  /** From now on nothing crosses, in either direction, on any connection old or new. */
  partition(): void;
  /** Ends a partition: what waited goes through, and new connections are made. */
  heal(): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let refusing = false;
  /** Sockets whose data is relayed: those a partition holds. */
  const relayed = new Set<Socket>();
  let partitioned = false;
  /** Connections accepted during a partition, made once it heals. */
  let waiting: (() => void)[] = [];
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
  };
  const cut = () => {
    for (const socket of open) socket.destroy();
  };
  // By hand rather than pipe(): pipe resumes a source when its destination drains, which would cross a partition.
  const relay = (from: Socket, to: Socket) => {
    relayed.add(from);
    from.on('close', () => relayed.delete(from));
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!partitioned) from.resume();
    });
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
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const connect = () =>
      upstream.connect(Number(port), hostname, () => {
        relay(client, upstream);
        relay(upstream, client);
        for (const socket of [client, upstream]) {
          if (partitioned) socket.pause();
          else socket.resume();
        }
      });
    if (!partitioned) connect();
    else {
      client.pause();
      waiting.push(connect);
    }
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
    partition() {
      partitioned = true;
      for (const socket of relayed) socket.pause();
    },
    heal() {
      partitioned = false;
      for (const socket of relayed) socket.resume();
      const made = waiting;
      waiting = [];
      for (const connect of made) connect();
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
