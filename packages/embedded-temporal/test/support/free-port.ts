// A free port for a server process the test starts (the package's own helper; the service's
// launcher has the same one in src/dev/launcher/processes.ts, which says more).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A port free now, for a child that binds it a moment later, taken below the kernel's ephemeral
 * range (where a port from bind(0), another program's bind(0) or an outgoing connection could take
 * it before the child binds it). Random and claimed, so that two test processes never pick the
 * same one within minutes; bind(0) when none below the range is free.
 */
export async function freePort(): Promise<number> {
  const from = 10_000;
  const to = Math.min(ephemeralLow(), 65_536) - 1;
  for (let i = 0; to > from && i < 40; i++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (claim(port) && (await bind(port)) === port) return port;
  }
  return bind(0) as Promise<number>;
}

const CLAIMS = path.join(os.tmpdir(), 'agent-service-port-claims');
const CLAIM_TTL_MS = 10 * 60_000;

/** Claims `port` for ten minutes through a file shared by the machine's processes: false when claimed lately. */
function claim(port: number): boolean {
  const file = path.join(CLAIMS, String(port));
  try {
    fs.mkdirSync(CLAIMS, { recursive: true });
    fs.closeSync(fs.openSync(file, 'wx'));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true; // no claims here: the bind check alone
    try {
      if (Date.now() - fs.statSync(file).mtimeMs < CLAIM_TTL_MS) return false;
      fs.utimesSync(file, new Date(), new Date());
      return true;
    } catch {
      return true;
    }
  }
}

function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // not Linux: the IANA range, which other systems use
  }
  return 49_152;
}

/** Binds `port` on loopback and lets it go: the port bound, or undefined when it is taken. */
function bind(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err) => (port === 0 ? reject(err) : resolve(undefined)));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}
