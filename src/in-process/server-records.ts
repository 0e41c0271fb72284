// Skill records without a mount (`approve` and `revoke` with --config or --server): starts the
// configured servers that the PATHs name in this process (server-core.ts, as `snapshot` does)
// and reads each skill's `.inspect/<label>/` record from the filesystem core the mount would
// serve, the same path and the same bytes. Wires; the record format is the core's alone.
import { ApprovalLedger } from '../approvals/approval-ledger.js';
import { SkillsMountError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { skillDirectory } from '../catalog/skill-record.js';
import type { InspectRecord } from '../fs/approved-view.js';
import { INSPECT_DIR, inspectFileName } from '../fs/mount-layout.js';
import type { Log } from '../log.js';
import { readWhole } from '../snapshot/view-walk.js';
import { labelledSkillPath, type ServerSelection } from '../config/server-selection.js';
import { loadMountConfig, type LabelledServer } from '../config/config.js';
import { startServerCore, type ServerCore } from './server-core.js';
import { SkillPathError, type SkillRecords } from './skill-records.js';

/** The deadline of every MCP request (the mount's default). */
const REQUEST_TIMEOUT_MS = 10_000;
/** A stdio server is stopped in at most three 1 s steps (stdin, SIGTERM, SIGKILL). */
const CLOSE_BOUND_MS = 4_000;
/** Skill directories named when a PATH names none of a server's. */
const SKILLS_NAMED = 10;

/**
 * Loads the servers' configuration, starts those the `paths` name (and --only keeps), and lists
 * each once. Throws ConfigError for a configuration to fix; a server that cannot be reached is
 * reported for each PATH that names it.
 */
export async function startServerRecords(selection: ServerSelection, paths: readonly string[], approvalsFile: string, log: Log): Promise<SkillRecords & { server(label: string): LabelledServer | undefined }> {
  const config = await loadMountConfig({ configPath: selection.configPath, serverFlags: selection.serverFlags, only: selection.only });
  for (const note of config.notes) log(note);
  const named = new Set(paths.map(labelledSkillPath).flatMap((skill) => (typeof skill === 'string' ? [] : [skill.label])));
  const servers = config.servers.filter((server) => named.has(server.label));
  // Read as the daemon reads it: each record shows the skill's approval state.
  const approvals = await ApprovalLedger.open(approvalsFile, log);
  let core: ServerCore | undefined;
  try {
    if (servers.length > 0) {
      core = await startServerCore({ servers, timeoutMs: REQUEST_TIMEOUT_MS, protocolVersion: undefined, verbose: false, hideDynamic: false, log, approvals });
    }
  } catch (error) {
    await approvals.idle();
    throw error;
  }
  const labels = `${selection.only.length > 0 ? 'servers --only keeps' : 'servers'}: ${config.servers.map((server) => server.label).join(', ') || 'none'}`;
  const flags = [selection.configPath === undefined ? undefined : `--config ${selection.configPath}`, selection.serverFlags.length > 0 ? '--server' : undefined].filter(Boolean).join(', ');

  return {
    server: (label) => config.servers.find((server) => server.label === label),
    async find(given) {
      const skill = labelledSkillPath(given);
      if (typeof skill === 'string') throw new SkillPathError(`${given}: ${skill}; name LABEL/SKILLDIR`);
      const { label, directory } = skill;
      const catalog = core?.catalogs.find((candidate) => candidate.label === label);
      if (!core || !catalog) throw new SkillPathError(`${given}: no server labelled "${label}" in ${flags}; ${labels}`, 'unreachable');
      const health = catalog.health();
      if (health.connection.status !== 'connected' && health.connection.status !== 'degraded') {
        const reason = 'reason' in health.connection && health.connection.reason !== undefined ? `: ${escapeForLog(health.connection.reason)}` : ` (${health.connection.status})`;
        throw new SkillPathError(`${given}: server "${label}" could not be reached${reason}`, 'unreachable');
      }
      let record: InspectRecord;
      try {
        const bytes = await readWhole(core.filesystem, `/${INSPECT_DIR}/${label}/${inspectFileName(directory)}`);
        record = JSON.parse(bytes.toString('utf8')) as InspectRecord;
      } catch (error) {
        if (!(error instanceof SkillsMountError)) throw error;
        if (error.code !== 'NOT_FOUND') throw new SkillPathError(`${given}: cannot read the skill's record: ${escapeForLog(error.message)}`);
        const skills = [...catalog.skillRecords()].map((held) => escapeForLog(skillDirectory(held))).sort();
        const some = skills.length === 0 ? 'none' : `${skills.slice(0, SKILLS_NAMED).join(', ')}${skills.length > SKILLS_NAMED ? `, and ${skills.length - SKILLS_NAMED} more` : ''}`;
        const incomplete = health.listingComplete ? '' : ' so far (its listing is incomplete)';
        throw new SkillPathError(`${given}: server "${label}" has no skill at ${directory}${incomplete} (its skills: ${some})`);
      }
      return {
        location: { label, directory, where: `from server "${label}", started here (${flags})` },
        record,
        async skillMd() {
          try {
            return { text: (await readWhole(core.filesystem, `/${label}/${directory}/SKILL.md`)).toString('utf8') };
          } catch (error) {
            if (!(error instanceof SkillsMountError)) throw error;
            return { problem: escapeForLog(error.message) };
          }
        },
        // No mount to wait for: the approvals file is where it shows (and what `link` and a daemon read).
        whenApproved: async () => `recorded in ${approvalsFile}`,
        whenRevoked: async () => `removed from ${approvalsFile}`,
      };
    },
    async close() {
      await Promise.race([Promise.all([core?.close(), approvals.idle()]), delay(CLOSE_BOUND_MS)]);
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
