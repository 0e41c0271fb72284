// Whether the --metrics endpoint listens beyond this host, and the warning that says so and
// names what anyone who reaches it reads. Knows addresses and words, not sockets.
import { BlockList } from 'node:net';

/** What the endpoint serves that a reader learns from: the configured labels and the mountpoint. */
export interface ExposedFacts {
  servers: readonly string[];
  mountpoint: string;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
const EVERY_ADDRESS = new Set(['0.0.0.0', '::']);
const LABELS_SHOWN = 6;

/** Whether `address` (as the system bound it) reaches this host only: 127.0.0.0/8, ::1, ::ffff:127.x.x.x. */
export function isLoopbackAddress(address: string): boolean {
  return LOOPBACK.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
}

/** The warning for an endpoint listening on a non-loopback address, naming what it serves; undefined on loopback. */
export function exposureWarning(listening: { url: string; address: string }, facts: ExposedFacts): string | undefined {
  if (isLoopbackAddress(listening.address)) return undefined;
  const where = EVERY_ADDRESS.has(listening.address) ? 'every address of this host' : `${listening.address}, not a loopback address`;
  return (
    `warning: --metrics listens on ${where} (${listening.url}), with no authentication and no TLS: anyone who can reach it reads ` +
    `/metrics (the server labels ${labels(facts.servers)}, how many skills each shows, declines and rejects, whether each is up, ` +
    `request, error and FUSE operation counts, cache sizes, the process's memory and Node version) and /healthz (the mountpoint ` +
    `${facts.mountpoint} in its reasons); expose it only on a network you trust, or keep it on 127.0.0.1 behind an authenticating proxy (docs/metrics.md)`
  );
}

/** Logs exposureWarning's line when there is one: the daemon's one call. */
export function warnIfExposed(listening: { url: string; address: string }, facts: ExposedFacts, log: (line: string) => void): void {
  const warning = exposureWarning(listening, facts);
  if (warning !== undefined) log(warning);
}

function labels(servers: readonly string[]): string {
  if (servers.length === 0) return '(none)';
  const shown = servers.slice(0, LABELS_SHOWN).join(', ');
  return servers.length > LABELS_SHOWN ? `${shown} and ${servers.length - LABELS_SHOWN} more` : shown;
}
