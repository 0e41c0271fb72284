// `skills-mount doctor`: with every probe in place it says so and exits 0; with each missing piece
// simulated (no /dev/fuse access, no fusermount3 or one not setuid, no user_allow_other, no addon,
// an old kernel, a broken config, an unreachable server, a noexec link store, another platform)
// the line for that piece says what to do, and the exit is 1 exactly when a needed piece is
// missing. One real run on this machine through the built CLI.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/command-line.js';
import { runDoctor, type DoctorOptions, type DoctorProbes } from '../../src/cli/doctor-command.js';
import { line, machine } from '../support/doctor-machine.js';
import { ConfigError } from '../../src/errors.js';

const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));
const OPTIONS: DoctorOptions = { configPath: undefined, serverFlags: [], only: [], json: false, serverDeadlineMs: 50 };

describe('skills-mount doctor', () => {
  it('everything in place: one ok line per check, exit 0', async () => {
    const { text, exitCode } = await runDoctor(OPTIONS, machine());
    expect(exitCode).toBe(0);
    expect(text).toContain('ok    addon             libfuse 3 addon: prebuild /pkg/prebuilds/linux-x64/skills_fuse.node');
    expect(line(text, 'server demo')).toMatch(/^ok {4}server demo +stdio skills-serve: 5 skills listed \(protocol 2026-07-28\)$/);
    expect(line(text, 'sign-in')).toContain('signed in: docs');
    expect(text.trimEnd().split('\n').at(-1)).toBe('doctor: everything the mount and link need is in place');
  });

  it.each<[string, Partial<DoctorProbes>, string, RegExp, number]>([
    ['no /dev/fuse', { exists: async () => false }, 'fuse device', /FAIL.*\/dev\/fuse does not exist: sudo modprobe fuse; in a container, docker run --device \/dev\/fuse/, 1],
    ['no access to /dev/fuse', { readWrite: async () => false }, 'fuse device', /FAIL.*not readable and writable by this user: sudo chmod 0666 \/dev\/fuse/, 1],
    ['SKILLS_MOUNT_NO_FUSE=1', { env: { SKILLS_MOUNT_NO_FUSE: '1' } }, 'fuse device', /FAIL.*treated as unusable \(SKILLS_MOUNT_NO_FUSE=1\)/, 1],
    ['no fusermount3', { which: async () => undefined }, 'fusermount3', /FAIL.*not on PATH: sudo apt-get install fuse3/, 1],
    ['fusermount3 not setuid', { setuidRoot: async () => false }, 'fusermount3', /FAIL.*\/usr\/bin\/fusermount3 is not setuid root.*sudo chmod u\+s/, 1],
    ['no user_allow_other', { readText: async () => '# nothing\n' }, 'user_allow_other', /^warn.*needed only for --allow-user; add the line user_allow_other there as root/, 0],
    ['no addon', { addon: async () => ({ loaded: false, reason: 'no libfuse 3 addon loads on linux-ia32 (prebuild /pkg/prebuilds/linux-ia32/skills_fuse.node: not there)' }) }, 'addon', /FAIL.*linux-ia32.*npm explore -g skills-mount -- npm run build-native/, 1],
    ['an old kernel', { kernelRelease: '4.19.0-27-amd64' }, 'kernel', /^warn.*4\.19\.0-27-amd64: older than 5\.1/, 0],
    ['a broken config', { loadConfig: async () => { throw new ConfigError('config /x.json: line 3: expected ","'); } }, 'config', /FAIL.*config \/x\.json: line 3/, 1],
    ['an unreachable server', { reach: async (server) => (server.label === 'docs' ? { reached: false, reason: 'connect ECONNREFUSED 127.0.0.1:9' } : { reached: true, skills: 1, protocolVersion: '2025-11-25' }) }, 'server docs', /FAIL.*http https:\/\/docs\.example\/mcp: not reached within 50 ms: connect ECONNREFUSED/, 1],
    ['a noexec link store', { storeFilesystem: async () => ({ mountpoint: '/home', noexec: true }) }, 'link store', /FAIL.*is on a noexec filesystem \(\/home\): linked skills' scripts could not run/, 1],
    ['no sign-in module', { signIn: async () => undefined }, 'sign-in', /^skip.*this build has no sign-in/, 0],
    [
      'a machine policy not honoured',
      { policy: async () => ({ inForce: true, files: [{ path: '/etc/skills-mount/policy.json', state: 'not honoured: owned by uid 1000, not root' }], lines: [] }) },
      'policy',
      /FAIL.*\/etc\/skills-mount\/policy\.json: not honoured: owned by uid 1000, not root: every mount, approval, lock and link is refused/,
      1,
    ],
    [
      'a policy in force',
      { policy: async () => ({ inForce: true, files: [{ path: '/etc/skills-mount/policy.json', state: 'in force' }], lines: ['policy /etc/skills-mount/policy.json: in force', '  servers[0]: https://skills.example.com/team/ may mount, link'] }) },
      'policy',
      /^ok.*policy \/etc\/skills-mount\/policy\.json: in force; servers\[0\]: https:\/\/skills\.example\.com\/team\/ may mount, link/,
      0,
    ],
    ['a server not signed in', { signIn: async () => ({ signedIn: [], signedOut: ['docs'] }) }, 'sign-in', /no sign-in stored: docs \(skills-mount login LABEL/, 0],
  ])('%s: the right line, and exit 1 only when needed', async (_what, changes, name, expected, exitCode) => {
    const { text, exitCode: code } = await runDoctor(OPTIONS, machine(changes));
    expect(line(text, name)).toMatch(expected);
    expect(code).toBe(exitCode);
    if (exitCode === 1) expect(text.trimEnd().split('\n').at(-1)).toContain(`missing: ${name}`);
  });

  it('root: no need for user_allow_other, a setuid fusermount3 or access checks', async () => {
    const { text, exitCode } = await runDoctor(OPTIONS, machine({ uid: 0, readWrite: async () => false, setuidRoot: async () => false, readText: async () => undefined }));
    expect(exitCode).toBe(0);
    expect(line(text, 'user_allow_other')).toContain('not needed: root');
  });

  it('macOS: the platform line says what works there; the config and link store are still checked', async () => {
    const { text, exitCode } = await runDoctor(OPTIONS, machine({ platform: 'darwin', arch: 'arm64' }));
    expect(exitCode).toBe(1);
    expect(line(text, 'platform')).toMatch(/FAIL.*darwin-arm64: macOS has FUSE only through macFUSE.*snapshot, verify, approve and link work here/);
    expect(text).not.toContain('fusermount3');
    expect(line(text, 'server demo')).toMatch(/^ok/);
  });

  it('--json: every check and ok', async () => {
    const { text } = await runDoctor({ ...OPTIONS, json: true }, machine({ which: async () => undefined }));
    const report = JSON.parse(text) as { ok: boolean; checks: Array<{ name: string; status: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.find((check) => check.name === 'fusermount3')?.status).toBe('fail');
  });

  it('parses as a command of its own', () => {
    expect(parseCommandLine(['doctor', '--config', 'c.json', '--only', 'a,b', '--json'])).toMatchObject({ command: 'doctor', options: { configPath: 'c.json', only: ['a', 'b'], json: true } });
    expect(() => parseCommandLine(['doctor', 'extra'])).toThrow(ConfigError);
  });

  it('runs for real on this machine through the built CLI: one line per check, the addon and where it loads from, an exit that matches', async () => {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, [SKILLS_MOUNT, 'doctor'], { timeout: 30_000 }, (error, out) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out })),
    );
    const lines = stdout.trimEnd().split('\n');
    for (const name of ['config', 'server demo', 'link store']) expect(lines.some((l) => l.slice(6).startsWith(name)), name).toBe(true);
    if (process.platform === 'linux') expect(lines.some((l) => /^(ok|FAIL) +addon /.test(l))).toBe(true);
    expect(code).toBe(lines.some((l) => l.startsWith('FAIL')) ? 1 : 0);
    expect(lines.at(-1)).toMatch(/^doctor: /);
  });
});
