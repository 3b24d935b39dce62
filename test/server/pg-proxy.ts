import net from 'node:net';

/** A connection through the proxy. */
export interface Piped {
  /** The application_name of its startup packet ('notif-inbox' for the pool's, 'notif-inbox listen', 'notif-inbox migrate'). */
  app: string;
  blackholed: boolean;
  /** Not closed yet on the service's side. */
  open: boolean;
  /** The service closed its side: after its FIN, a byte sent to it was refused (a half-open socket takes it). */
  released: boolean;
  /** Resets both sides at once (RST), as a database host or a failover may. */
  reset: () => void;
}

/**
 * A TCP proxy between the service and PostgreSQL (`target`, a postgres:// URL): forwards every
 * connection, and `blackhole(which)` silences the chosen ones open now (forwards nothing either way,
 * closes nothing), as a NAT or firewall dropping their state, a partition or a host that died hard.
 */
export async function startPgProxy(target: URL) {
  const piped: Piped[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = net.connect({ host: target.hostname, port: Number(target.port || 5432), allowHalfOpen: true });
    const conn: Piped = { app: '', blackholed: false, open: true, released: false, reset: () => (inbound.resetAndDestroy(), outbound.resetAndDestroy()) };
    let first = true;
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    inbound.on('data', (chunk: Buffer) => {
      if (first) (first = false), (conn.app = /application_name\0([^\0]*)\0/.exec(chunk.toString('latin1'))?.[1] ?? ''), piped.push(conn);
      if (!conn.blackholed) outbound.write(chunk);
    });
    outbound.on('data', (chunk) => conn.blackholed || inbound.write(chunk));
    outbound.on('end', () => conn.blackholed || inbound.end());
    inbound.on('end', () => {
      if (!conn.blackholed) return void outbound.end();
      // The service sent its FIN: a socket it still holds open takes these bytes; one it let go answers with a reset.
      inbound.write('x');
      setTimeout(() => inbound.write('x', (err) => (conn.released = !!err)), 100);
    });
    inbound.on('close', () => ((conn.open = false), outbound.destroy()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    piped,
    /** Silences the connections open now that `which` picks; returns them. */
    blackhole: (which: (c: Piped) => boolean) => piped.filter(which).map((c) => ((c.blackholed = true), c)),
    /** `url` with its host and port replaced by the proxy's. */
    through: (url: string) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String((server.address() as net.AddressInfo).port);
      return u.toString();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
