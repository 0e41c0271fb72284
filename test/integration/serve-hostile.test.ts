// `skills-mount serve` in front of a hostile or broken upstream (issue 51, item 2), through the
// built CLI: one serve --all of three servers: a good skills-serve ("docs"), a hostile one
// ("bad": a wrong digest, a wrong size, a tampered SKILL.md, bytes that change between reads, an
// answer slower than --timeout, an answer far larger than listed), a skills-serve over HTTP that
// dies while served ("gone"), and one that never starts ("dead"). A client (the SDK's SkillsClient,
// which verifies, and plain reads past its cache) gets an error or an absent skill, never bytes
// other than the listed ones; the log names the server, the URI and the reason; docs keeps working.
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { SKILLS_SERVE, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { servedBytes, servedUris, startServe, type RunningServe } from '../support/serve-watch.js';
import { connectHttp, type ClientEra } from '../support/server-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { person, writeConfig, type Person } from '../support/team-lock-world.js';
import { makeTempDir } from '../support/temp-dir.js';

const BIG_BYTES = 2 * 1024 * 1024;
const GOOD = { 'good/SKILL.md': skillMd('good'), 'good/ref.md': 'good reference\n' };

/** Every answer `read` gives in `times` tries: the bytes, or the error's message. */
async function answers(read: () => Promise<string>, times: number): Promise<Array<{ bytes: string } | { error: string }>> {
  const seen: Array<{ bytes: string } | { error: string }> = [];
  for (let i = 0; i < times; i++) {
    seen.push(await read().then(
      (bytes) => ({ bytes }),
      (error: Error) => ({ error: error.message }),
    ));
  }
  return seen;
}

describe('serve in front of hostile and broken upstream servers', () => {
  let base: string;
  let ana: Person;
  let gone: ListeningServer | undefined;
  let gateway: RunningServe;
  const clients: Client[] = [];

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-serve-hostile-');
    const served = path.join(base, 'served');
    await writeTree(served, GOOD);
    const goneDir = path.join(base, 'gone');
    await writeTree(goneDir, { 'later/SKILL.md': skillMd('later') });
    gone = await startHttpServe([goneDir]);
    ana = await person(base, 'ana');
    const bad = await hostileEntry(base, 'bad', {
      listing: true,
      skills: [
        hostileSkill('digest', 'a file whose bytes are not the listed ones', { 'data.txt': { text: 'served bytes\n', listedText: 'listed bytes\n' } }),
        hostileSkill('size', 'a file one byte longer than listed', { 'data.txt': { text: 'twelve bytes', listedSize: 11 } }),
        { ...hostileSkill('tampered', 'a SKILL.md served with one bit flipped'), files: { 'skill://tampered/SKILL.md': { text: skillMd('tampered', 'a SKILL.md served with one bit flipped'), fault: 'tampered' } } },
        hostileSkill('changing', 'a file whose bytes change between reads', { 'data.txt': { text: 'the listed bytes\n', fault: 'alternate' } }),
        hostileSkill('slow', 'a file answered after the deadline', { 'data.txt': { text: 'late\n', fault: 'slow', delayMs: 4_000 } }),
        hostileSkill('oversized', 'a file far larger than listed', { 'big.txt': { text: 'x', repeat: BIG_BYTES, listedText: 'x\n' } }),
      ],
    });
    await writeConfig(ana, {
      docs: { command: process.execPath, args: [SKILLS_SERVE, served] },
      bad,
      gone: { url: gone.url },
      dead: { command: process.execPath, args: ['-e', 'process.stderr.write("dead: cannot start\\n"); process.exit(3)'] },
    });
    gateway = await startServe(ana, ['--config', ana.configFile, '--all', '--timeout', '1', '--no-disk-cache']);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gateway?.stop();
    await gone?.stop();
    if (base) await removeReadOnlyTree(base);
  });

  async function client(era: ClientEra): Promise<Client> {
    const connected = await connectHttp(gateway.url, era);
    clients.push(connected);
    return connected;
  }

  it('a wrong digest, a wrong size, a tampered SKILL.md, a slow answer, an oversized one: an error naming the fault, never the bytes; the log names server, URI and reason', async () => {
    const reader = await client('legacy');
    expect(await servedUris(reader)).toEqual(
      ['bad/changing', 'bad/digest', 'bad/oversized', 'bad/size', 'bad/slow', 'bad/tampered', 'docs/good', 'gone/later'].map((dir) => `skill://${dir}/SKILL.md`),
    );
    const faults: Array<[string, RegExp]> = [
      ['skill://bad/digest/data.txt', /digest mismatch/],
      ['skill://bad/size/data.txt', /size mismatch: expected 11 bytes, got 12 bytes/],
      ['skill://bad/tampered/SKILL.md', /digest mismatch/],
      ['skill://bad/slow/data.txt', /no answer within 1000 ms/],
      ['skill://bad/oversized/big.txt', /size mismatch: expected 2 bytes, got 2097152 bytes/],
    ];
    for (const [uri, reason] of faults) {
      const started = Date.now();
      const seen = await answers(() => servedBytes(reader, uri), 2);
      // The deadline holds: --timeout 1 against a 4 s answer.
      expect(Date.now() - started, uri).toBeLessThan(4_000);
      for (const answer of seen) expect(answer, uri).toEqual({ error: expect.stringMatching(reason) });
      const upstream = uri.replace(/^skill:\/\/bad\//, 'skill://');
      expect(gateway.log(), uri).toMatch(new RegExp(`\\[bad\\] ${escape(upstream)}: not served: .*${reason.source}`));
    }
    // A rejected SKILL.md takes its skill out of skills/list: absent, not served with other bytes.
    await expect.poll(() => servedUris(reader), { timeout: 2_000 }).not.toContain('skill://bad/tampered/SKILL.md');
  }, 30_000);

  it('bytes that change between reads: the reads whose bytes are not the listed ones fail, the others give exactly the listed bytes', async () => {
    const reader = await client('modern');
    const seen = await answers(() => servedBytes(reader, 'skill://bad/changing/data.txt'), 4);
    // The server's 1st answer is tampered, its 2nd good: the good one verified is served from memory after.
    expect(seen).toEqual([{ error: expect.stringMatching(/digest mismatch/) }, { bytes: 'the listed bytes\n' }, { bytes: 'the listed bytes\n' }, { bytes: 'the listed bytes\n' }]);
    // The SDK's SkillsClient verifies what it reads: it accepts them.
    const skills = new SkillsClient(reader);
    const changing = (await skills.list()).skills.find((skill) => skill.uri === 'skill://bad/changing/SKILL.md')!;
    const file = await skills.read(changing, 'data.txt');
    expect(file.verified).toBe(true);
    expect(Buffer.from(file.bytes).toString()).toBe('the listed bytes\n');
  });

  it('a server that never starts serves nothing and is named in the log; one that dies while served fails its reads; the good server keeps working', async () => {
    const reader = await client('modern');
    expect(await servedUris(reader)).not.toContain(expect.stringMatching(/^skill:\/\/dead\//));
    expect(gateway.log()).toMatch(/\[dead\] cannot connect: .*retrying/);
    await gone!.stop();
    gone = undefined;
    expect(await answers(() => servedBytes(reader, 'skill://gone/later/SKILL.md'), 1)).toEqual([{ error: expect.stringMatching(/gone/) }]);
    expect(gateway.log()).toMatch(/\[gone\] skill:\/\/later\/SKILL\.md: not served: /);

    const skills = new SkillsClient(reader);
    const listing = await skills.list();
    expect(listing.invalid).toEqual([]);
    const good = listing.skills.find((skill) => skill.uri === 'skill://docs/good/SKILL.md')!;
    for (const [ref, bytes] of [['SKILL.md', GOOD['good/SKILL.md']], ['ref.md', GOOD['good/ref.md']]] as const) {
      const file = ref === 'SKILL.md' ? await skills.read(good) : await skills.read(good, ref);
      expect(file.verified, ref).toBe(true);
      expect(Buffer.from(file.bytes).toString(), ref).toBe(bytes);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
