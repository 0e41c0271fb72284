// The machine-wide policy as the built CLI finds it: /etc/skills-mount/policy.json, read by path,
// trusted only when root alone can change it and every folder on the way. Each command runs in a
// mount namespace of its own where /etc is a root-owned copy of the real one with the policy
// added (unshare + a bind mount), so the test never writes into the machine's /etc. Root only
// (the namespace and the ownership need it): CI runs as root. No FUSE: approve, lock and status
// against the reference server over Streamable HTTP.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { cli, gitProject, person, writeConfig, writePolicy, type CliResult, type Person } from '../support/team-lock-world.js';
import { skillText } from '../support/team-lockfile.js';
import { makeTempDir } from '../support/temp-dir.js';

const MACHINE_POLICY = '/etc/skills-mount/policy.json';

/** Why this machine cannot run the test, or undefined. */
function cannotRun(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (a mount namespace and a root-owned /etc)';
  try {
    execFileSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' });
  } catch {
    return 'unshare --mount is not permitted here';
  }
  return undefined;
}
const why = cannotRun();
// In CI (root) it always runs: a skip there would hide the machine policy going unread.
if (why !== undefined && process.env['CI'] !== undefined) throw new Error(`machine-policy.test.ts cannot run in CI: ${why}`);

describe.skipIf(why !== undefined)('the machine policy at /etc/skills-mount/policy.json', () => {
  let base: string;
  let server: ListeningServer;
  let etc: string;
  let who: Person;

  /** `skills-mount ARGS` as `who`, in a mount namespace whose /etc is `etc`. */
  function cliWithEtc(args: readonly string[]): Promise<CliResult> {
    const script = 'mount --bind "$1" /etc && shift && exec "$@"';
    return cli(who, args, { runUnder: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', etc] });
  }

  async function writeMachinePolicy(policy: unknown, folderMode = 0o755): Promise<void> {
    const folder = path.join(etc, 'skills-mount');
    await mkdir(folder, { recursive: true });
    await chmod(folder, folderMode);
    await writeFile(path.join(folder, 'policy.json'), `${JSON.stringify(policy)}\n`, { mode: 0o644 });
  }

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-machine-policy-');
    const served = path.join(base, 'served');
    await writeTree(served, { 'x/SKILL.md': skillText('x', 'Does x things'), 'y/SKILL.md': skillText('y', 'Does y things') });
    server = await startHttpServe([served]);
    // A copy of the real /etc, owned by root as the real one is (cp -a keeps owners and modes).
    etc = path.join(base, 'etc');
    execFileSync('cp', ['-a', '/etc', etc]);
    who = await person(base, 'ana');
    await writeConfig(who, { crew: { url: server.url } });
    // The user's own policy allows everything: the machine's has the last word all the same.
    await writePolicy(who, { policyVersion: 1, servers: [{ url: server.url, may: ['mount', 'approve', 'lock', 'link'] }] });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    if (base) await removeReadOnlyTree(base);
  });

  it('a server the machine lets be mounted only: approve and lock are refused naming the machine file and its rule; status shows both files', async () => {
    await writeMachinePolicy({ policyVersion: 1, servers: [{ url: server.url, may: ['mount'] }] });
    const approved = await cliWithEtc(['approve', 'crew/x', '--config', who.configFile, '--yes']);
    expect(approved.code, approved.stdout + approved.stderr).toBe(1);
    expect(approved.stdout + approved.stderr).toContain(`refused by policy ${MACHINE_POLICY} (servers[0]): skill "x" of server "crew" (${server.url}) may not be approved`);
    const project = await gitProject(path.join(base, 'project'));
    const locked = await cliWithEtc(['lock', 'crew/x', '--project', project, '--config', who.configFile, '--yes']);
    expect(locked.code, locked.stdout + locked.stderr).toBe(1);
    expect(locked.stdout + locked.stderr).toContain(`refused by policy ${MACHINE_POLICY} (servers[0]): server "crew" (${server.url}) may not be locked`);
    const status = await cliWithEtc(['status', '--json']);
    const report = JSON.parse(status.stdout) as { policy?: { files: Array<{ path: string; state: string }> } };
    expect(report.policy?.files).toEqual([
      { path: MACHINE_POLICY, state: 'in force' },
      { path: who.policyFile, state: 'in force' },
    ]);
  });

  it('the machine allows approving: approve goes through (the namespace changes nothing else)', async () => {
    await writeMachinePolicy({ policyVersion: 1, servers: [{ url: server.url, may: ['mount', 'approve'] }] });
    const approved = await cliWithEtc(['approve', 'crew/y', '--config', who.configFile, '--yes']);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
  });

  it('a machine policy someone other than root could change is not honoured: everything is refused, and status says why', async () => {
    // The folder writable by everyone: anyone could swap the file.
    await writeMachinePolicy({ policyVersion: 1, servers: [{ url: server.url, may: ['mount', 'approve', 'lock', 'link'] }] }, 0o777);
    const approved = await cliWithEtc(['approve', 'crew/x', '--config', who.configFile, '--yes']);
    expect(approved.code, approved.stdout + approved.stderr).toBe(1);
    expect(approved.stdout + approved.stderr).toContain(`refused by policy ${MACHINE_POLICY} (not honoured:`);
    const status = await cliWithEtc(['status', '--json']);
    const report = JSON.parse(status.stdout) as { policy?: { files: Array<{ path: string; state: string }> } };
    expect(report.policy?.files[0]?.path).toBe(MACHINE_POLICY);
    expect(report.policy?.files[0]?.state).toMatch(/^not honoured: /);
  });
});
