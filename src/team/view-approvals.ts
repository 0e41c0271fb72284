// Which servers a view may show and which approvals its approved view reads, for every outlet
// that shows the view (the mount, `serve`): the servers the policy lets be mounted, and the
// person's approvals or a project's lockfile, each as the policy allows. One place, so no outlet
// has rules of its own.
import { homedir } from 'node:os';
import path from 'node:path';
import type { ApprovalLedger, ApprovalsSource } from '../approvals/approval-ledger.js';
import type { LabelledServer, MountConfig } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { LockLedger } from './lock-ledger.js';
import { lockedApprovals } from './locked-approvals.js';
import { readLockfile } from './lockfile.js';
import { PolicedApprovals } from './policed-approvals.js';
import type { Policy } from './policy.js';
import { defaultSkillTexts } from './skill-texts.js';

/** The configured servers the policy lets be mounted (shown); each other one is named with the rule, and none at all is an error. */
export function mountableServers(config: MountConfig, policy: Policy, log: (line: string) => void, outcome = 'not mounted'): MountConfig {
  const servers = config.servers.filter((server) => {
    const refusal = policy.checkServer(server, 'mount');
    if (refusal !== undefined) log(`${refusal.message}: ${outcome}`);
    return refusal === undefined;
  });
  if (servers.length === 0) throw new ConfigError(`${config.origin}: the policy in force lets none of its servers be mounted (skills-mount doctor shows the policy)`);
  return { ...config, servers };
}

/**
 * What the approved view reads: the lockfile `lockfile` names (followed as it changes; `flag`
 * names it in errors), or the person's approvals; as the policy allows.
 */
export async function approvedSource(lockfile: string | undefined, approvals: ApprovalLedger, servers: readonly LabelledServer[], policy: Policy, log: (line: string) => void, flag = '--lock'): Promise<ApprovalsSource> {
  if (lockfile === undefined) return policy.inForce ? new PolicedApprovals(approvals, servers, policy, log) : approvals;
  const file = path.resolve(lockfile);
  // A lockfile the command line names must be there and usable: the view would otherwise show nothing, silently.
  if ((await readLockfile(file)) === undefined) throw new ConfigError(`${flag} ${lockfile}: no such lockfile`);
  const ledger = await LockLedger.open(file, () => lockedApprovals(file, servers, policy, 'view'), defaultSkillTexts(process.env, homedir()), log);
  ledger.watch();
  log(`the approved view shows the versions locked in ${file}`);
  return ledger;
}
