// `verify --against-server`: connects to the configured servers with the code `snapshot` uses
// (server-core.ts), walks the snapshot's view of them as `snapshot` does (view-walk.ts) and
// compares (server-comparison.ts). No disk cache: only what the servers list now counts. Wires.
import { homedir } from 'node:os';
import { ApprovalLedger } from '../approvals/approval-ledger.js';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import type { FilesystemCore } from '../fs/filesystem-core.js';
import type { Log } from '../log.js';
import { asCatalogDocument, compareWithServers, type CatalogDocument, type ServerComparison, type SnapshotSide } from '../snapshot/server-comparison.js';
import { readCatalog, readWhole, serverProblem, walkView } from '../snapshot/view-walk.js';
import type { ServerSelection } from '../config/server-selection.js';
import { loadMountConfig } from '../config/config.js';
import { startServerCore, type ServerCore } from './server-core.js';

/** A stdio server is stopped in at most three 1 s steps (stdin, SIGTERM, SIGKILL). */
const CLOSE_BOUND_MS = 4_000;

/** The comparison verify runs once it has read the snapshot's manifest. */
export function againstServers(settings: ServerSelection & { timeoutMs: number }, log: Log): (snapshot: SnapshotSide) => Promise<ServerComparison> {
  return async (snapshot) => {
    const startedAtMs = Date.now();
    const request = { configPath: settings.configPath, serverFlags: settings.serverFlags };
    const config = await loadMountConfig({ ...request, only: settings.only });
    for (const note of config.notes) log(note);
    // Labels the config has that --only left out: named as not compared, not as differences.
    const all = settings.only.length === 0 ? config : await loadMountConfig(request);
    const leftOut = new Set(all.servers.map((server) => server.label).filter((label) => !config.servers.some((server) => server.label === label)));
    const approvals = await ApprovalLedger.open(defaultApprovalsPath(process.env, homedir()), log);
    let core: ServerCore | undefined;
    try {
      core = await startServerCore({
        servers: config.servers,
        timeoutMs: settings.timeoutMs,
        protocolVersion: undefined,
        verbose: false,
        hideDynamic: !snapshot.manifest.includeDynamic,
        log,
        approvals,
      });
      const walk = await walkView(core.filesystem, snapshot.manifest.view, undefined);
      const catalog = await readCatalog(core.filesystem);
      const servers = config.servers.map(({ label }) => {
        const entry = catalog?.servers.find((server) => server.label === label);
        return { label, problem: entry === undefined ? 'not in the catalog' : serverProblem(entry) };
      });
      const documents = new Map<string, CatalogDocument | undefined>();
      for (const document of walk.documents) documents.set(document, await readDocument(core.filesystem, document));
      const comparison = compareWithServers(snapshot, { walk, servers, documents }, leftOut);
      log(`verify: listed ${config.servers.length} server${config.servers.length === 1 ? '' : 's'} from ${config.origin} and compared ${comparison.filesCompared} files in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s`);
      return comparison;
    } finally {
      await Promise.race([Promise.all([core?.close(), approvals.idle()]), delay(CLOSE_BOUND_MS)]);
    }
  };
}

async function readDocument(core: FilesystemCore, document: string): Promise<CatalogDocument | undefined> {
  try {
    return asCatalogDocument(JSON.parse((await readWhole(core, `/${document}`)).toString('utf8')));
  } catch {
    return undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
