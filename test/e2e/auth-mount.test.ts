// A real mount of a server that asks for a sign-in (test/support/auth-fixture.ts): the daemon
// shows it as "needs login" in status.json and does not retry in a loop; `login` in "another
// terminal" (this process, the same token store) and the running mount serves the server's
// skills within 2 s, no restart. Signed out elsewhere, it turns back to "needs login" and keeps
// its listing served. No issued token in the daemon's log.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultTokenStorePath, TokenStore } from '../../src/auth/token-store.js';
import { runLogin, type LoginIo } from '../../src/cli/login-command.js';
import { startAuthFixture, type AuthFixture } from '../support/auth-fixture.js';
import { SKILLS_MOUNT, startMount, type RunningMount } from '../support/mount-harness.js';
import { fuseAvailable, requireFuse } from '../support/require-fuse.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

requireFuse();

const BIN = process.env.SKILLS_MOUNT_BIN ?? SKILLS_MOUNT;

interface StatusServer {
  label: string;
  state: string;
  reason?: string;
}

describe.skipIf(!fuseAvailable() && !process.env.CI)('a mounted server that needs a sign-in', () => {
  let fixture: AuthFixture | undefined;
  let mount: RunningMount | undefined;
  let configHome: string | undefined;
  afterEach(async () => {
    await mount?.stop();
    await fixture?.close();
    await removeDir(configHome);
  });

  it('is "needs login" until login elsewhere, then serves its skills within 2 s', async () => {
    fixture = await startAuthFixture();
    configHome = await makeTempDir('skills-mount-auth-e2e-');
    const env = { ...process.env, XDG_CONFIG_HOME: configHome };
    mount = await startMount({ config: { team: { type: 'http', url: fixture.mcpUrl } }, env, command: [process.execPath, BIN] });
    const state = async (): Promise<StatusServer | undefined> => {
      const status = JSON.parse(await readFile(path.join(mount!.mountpoint, 'status.json'), 'utf8')) as { servers?: StatusServer[] };
      return status.servers?.find((server) => server.label === 'team');
    };
    expect(await state()).toMatchObject({ state: 'needs-login', reason: expect.stringContaining('run: skills-mount login team') });
    const refused = fixture.unauthorizedCount();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(fixture.unauthorizedCount()).toBe(refused);

    const logs: string[] = [];
    const io: LoginIo = {
      env,
      store: new TokenStore(defaultTokenStorePath(env)),
      say: (line) => logs.push(line),
      async readLine() {
        const address = /\n\s+(\S+)/.exec([...logs].reverse().find((line) => line.includes('open this address')) ?? '')?.[1];
        if (address === undefined) return undefined;
        return (await fetch(address, { redirect: 'manual' })).headers.get('location') ?? undefined;
      },
    };
    expect(await runLogin({ labels: ['team'], configPath: undefined, serverFlags: [`team=${fixture.mcpUrl}`], noBrowser: true, waitMs: 5_000, timeoutMs: 5_000 }, io)).toBe(0);
    const returnedAt = Date.now();
    for (;;) {
      const entries = await readdir(path.join(mount.mountpoint, 'team')).catch(() => []);
      if ((await state())?.state === 'connected' && entries.length > 0) break;
      expect(Date.now() - returnedAt, `still ${JSON.stringify(await state())}`).toBeLessThan(2_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    process.stdout.write(`auth e2e: the mount served the server ${Date.now() - returnedAt} ms after login returned\n`);
    const listed = await readdir(path.join(mount.mountpoint, 'team'));
    expect(listed).not.toHaveLength(0);

    // Signed out elsewhere: the next request's refresh is refused; the listing stays served.
    fixture.revokeRefreshTokens();
    fixture.expireAccessTokens();
    const started = Date.now();
    while ((await state())?.state !== 'needs-login') {
      // Reads that need the server (each file once) make it notice.
      await readFile(path.join(mount.mountpoint, 'team', listed[0]!, 'SKILL.md')).catch(() => undefined);
      await readdir(path.join(mount.mountpoint, 'team', listed[0]!), { recursive: true }).catch(() => undefined);
      expect(Date.now() - started, `still ${JSON.stringify(await state())}`).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await state())?.reason).toMatch(/needs login: .*run: skills-mount login team/);
    expect(await readdir(path.join(mount.mountpoint, 'team'))).toEqual(listed);
    for (const token of fixture.issued) expect(mount.log()).not.toContain(token);
  }, 60_000);
});
