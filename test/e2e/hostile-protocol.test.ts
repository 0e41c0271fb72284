// Servers that break the protocol, through one real mount: answers that never come, come
// late, come as garbage or as errors; listings and indexes that are not JSON, have the
// wrong shape or repeat themselves, page forever or hold a million entries; a declared
// directoryRead that is refused; a notification storm. Each costs only its own paths.
// (Crashes and restarts are covered by the fault tests.)
import path from 'node:path';
import { DEFAULT_PAGING_LIMITS } from '../../src/mcp/mcp-skill-source.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill, requestCount, type HostileSkill } from '../support/hostile-scenario.js';
import { CORPUS_DIR, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { delay } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const TIMEOUT_S = 2;
const ok = () => hostileSkill('ok', 'A good skill next to the bad parts', { 'ref.md': { text: 'fine\n' } });

describe('hostile protocol', () => {
  let mount: RunningMount;
  let mountedInMs: number;
  const at = (...parts: string[]) => path.join(mount.mountpoint, ...parts);
  const logLines = (pattern: RegExp) => mount.log().split('\n').filter((line) => pattern.test(line));

  beforeAll(async () => {
    const dir = await makeTestDir();
    const proto: HostileSkill[] = [
      hostileSkill('good', 'Fine', { 'ref.md': { text: 'reference\n' } }),
      hostileSkill('hang', 'Never answers', { 'ref.md': { text: 'x\n', fault: 'hang' } }),
      hostileSkill('slow', 'Answers late', { 'ref.md': { text: 'late but right\n', fault: 'slow', delayMs: 600 } }),
      hostileSkill('non-json', 'Garbage line', { 'ref.md': { text: 'x\n', fault: 'non-json' } }),
      hostileSkill('malformed', 'Not JSON-RPC', { 'ref.md': { text: 'x\n', fault: 'malformed-jsonrpc' } }),
      hostileSkill('wrong-id', 'Answers another request', { 'ref.md': { text: 'x\n', fault: 'wrong-id' } }),
      hostileSkill('not-supported', '-32601 for a listed file', { 'ref.md': { text: 'x\n', fault: 'method-not-found' } }),
      hostileSkill('server-error', 'Internal error', { 'ref.md': { text: 'x\n', fault: 'server-error' } }),
      hostileSkill('bad-result', 'contents is not an array', { 'ref.md': { text: 'x\n', fault: 'wrong-result-type' } }),
      hostileSkill('storm', '100 list_changed, then the answer', { 'ref.md': { text: 'after the storm\n', fault: 'storm' } }),
    ];
    const okEntry = {
      url: 'skill://ok/SKILL.md',
      digest: 'sha256:' + '0'.repeat(64),
      frontmatter: { name: 'ok', description: 'x' },
    };
    const config: Record<string, unknown> = {
      proto: await hostileEntry(dir, 'proto', { listing: true, skills: proto }),
      mute: await hostileEntry(dir, 'mute', { listing: true, skills: [ok(), hostileSkill('mute', 'Closes stdout', { 'ref.md': { text: 'x\n', fault: 'close-stdout' } })] }),
      'list-garbage': await hostileEntry(dir, 'list-garbage', { listing: true, listingFault: 'malformed-result', skills: [ok()] }),
      'list-not-array': await hostileEntry(dir, 'list-not-array', { listing: true, listingFault: 'not-array', skills: [ok()] }),
      'list-types': await hostileEntry(dir, 'list-types', { listing: true, listingFault: 'wrong-types', skills: [ok()] }),
      'list-missing': await hostileEntry(dir, 'list-missing', { listing: true, listingFault: 'missing-fields', skills: [ok()] }),
      'list-dups': await hostileEntry(dir, 'list-dups', { listing: true, listingFault: 'duplicates', skills: [ok()] }),
      forever: await hostileEntry(dir, 'forever', { listing: true, listingFault: 'cursor-forever', skills: [ok()] }),
      huge: await hostileEntry(dir, 'huge', { listing: true, listingFault: 'huge', hugeEntries: 1_000_000, hugePageSize: 5_000, skills: [ok()] }),
      'index-garbage': await hostileEntry(dir, 'index-garbage', { index: true, indexText: 'not JSON {', skills: [ok()] }),
      'index-shape': await hostileEntry(dir, 'index-shape', {
        index: true,
        skills: [ok()],
        indexText: JSON.stringify({ skills: [okEntry, { url: 5, digest: 'nope' }, { digest: okEntry.digest }, 'skill', okEntry] }),
      }),
      'dir-refused': await hostileEntry(dir, 'dir-refused', {
        listing: true,
        directoryRead: true,
        directories: { 'skill://docs': 'method-not-found' },
        skills: [hostileSkill('docs/guide', 'Under a refused directory')],
      }),
      corpus: serveEntry(CORPUS_DIR),
    };
    const startedAt = Date.now();
    mount = await startMount({ dir, config, args: ['--timeout', String(TIMEOUT_S)], readyTimeoutMs: 90_000 });
    mountedInMs = Date.now() - startedAt;
    expect((await run('cat', [at('proto', 'good', 'ref.md')])).stdout).toBe('reference\n');
  }, 120_000);

  afterAll(async () => {
    if (process.env.HOSTILE_DEBUG) console.log(mount?.log());
    await mount?.stop();
  });

  it('answers that never come, or come as garbage or errors: EIO within the deadline, each logged', async () => {
    const cases: Array<[string, RegExp]> = [
      ['hang', new RegExp(`proto: resources/read skill://hang/ref.md: no answer within ${TIMEOUT_S * 1000} ms`)],
      ['non-json', /proto: resources\/read skill:\/\/non-json\/ref.md: no answer within/],
      ['malformed', /proto: resources\/read skill:\/\/malformed\/ref.md: no answer within/],
      ['wrong-id', /proto: resources\/read skill:\/\/wrong-id\/ref.md: no answer within/],
      ['not-supported', /proto: resources\/read skill:\/\/not-supported\/ref.md: method not supported/],
      ['server-error', /proto: resources\/read skill:\/\/server-error\/ref.md: server error -32603/],
      ['bad-result', /proto: resources\/read skill:\/\/bad-result\/ref.md: malformed result/],
    ];
    const startedAt = Date.now();
    const results = await Promise.all(cases.map(([name]) => run('cat', [at('proto', name, 'ref.md')], 30_000)));
    // One deadline (plus slack for a loaded machine), not one per case and never a hang.
    expect(Date.now() - startedAt).toBeLessThan(TIMEOUT_S * 1000 + 8_000);
    for (const [i, [name, line]] of cases.entries()) {
      expect(results[i]!.stderr, name).toMatch(/Input\/output error/);
      expect(logLines(line).length, `${name}: ${line}`).toBeGreaterThan(0);
    }
    // What was wrong on the wire is logged with the server's label.
    expect(logLines(/\[proto\] protocol error: .*JSON/).length).toBeGreaterThan(0);
    // The same skills' SKILL.md files, read after the garbage, are fine.
    for (const [name] of cases) expect((await run('cat', [at('proto', name, 'SKILL.md')])).code, name).toBe(0);
  });

  it('a slow answer within the deadline is served, byte for byte', async () => {
    expect((await run('cat', [at('proto', 'slow', 'ref.md')])).stdout).toBe('late but right\n');
  });

  it('a storm of 100 list_changed notifications costs at most two listings', async () => {
    const before = requestCount(mount.log(), 'proto', 'skills/list');
    expect((await run('cat', [at('proto', 'storm', 'ref.md')])).stdout).toBe('after the storm\n');
    // An absence (no third listing) can only be seen by waiting: past the 1 s storm interval.
    await delay(1_500);
    const listings = requestCount(mount.log(), 'proto', 'skills/list') - before;
    expect(listings).toBeGreaterThanOrEqual(1);
    expect(listings).toBeLessThanOrEqual(2);
    expect((await run('cat', [at('proto', 'good', 'ref.md')])).stdout).toBe('reference\n');
  });

  it('a server that closes its stdout: its read fails with EIO, other servers are unaffected', async () => {
    expect((await run('cat', [at('mute', 'ok', 'ref.md')])).stdout).toBe('fine\n');
    expect((await run('cat', [at('mute', 'mute', 'ref.md')], 30_000)).stderr).toMatch(/Input\/output error/);
    expect(logLines(/mute: resources\/read skill:\/\/mute\/ref.md: (no answer within|connection closed)/).length).toBeGreaterThan(0);
    // The closed stdout is noticed as a lost connection (restarted with backoff), not left to time out request by request.
    expect(logLines(/\[mute\] connection closed by the server; retrying in/).length).toBeGreaterThan(0);
    // Verified before stdout closed: still served from the cache.
    expect((await run('cat', [at('mute', 'ok', 'ref.md')])).stdout).toBe('fine\n');
    expect((await run('cat', [at('proto', 'good', 'ref.md')])).stdout).toBe('reference\n');
  });

  it('a skills/list that is not JSON or not a list: discovery fails, logged; skills stay reachable by path', async () => {
    for (const label of ['list-garbage', 'list-not-array']) {
      expect(logLines(new RegExp(`\\[${label}\\] discovery failed: `)).length, label).toBeGreaterThan(0);
      expect((await run('cat', [at(label, 'ok', 'ref.md')])).stdout, label).toBe('fine\n');
    }
    expect(logLines(/\[list-not-array\] discovery failed: .*malformed result/).length).toBeGreaterThan(0);
  });

  it('listing entries with wrong types, missing fields or repeated: those entries are dropped and named', async () => {
    expect(logLines(/\[list-types\] entry \d+: /).length).toBeGreaterThanOrEqual(4);
    expect(logLines(/\[list-missing\] entry \d+: (uri|frontmatter)/).length).toBeGreaterThanOrEqual(2);
    expect(logLines(/\[list-dups\] skill skill:\/\/ok\/SKILL.md listed twice; the first entry is used/).length).toBeGreaterThan(0);
    for (const label of ['list-types', 'list-missing', 'list-dups']) {
      expect((await run('ls', [at(label)])).stdout.split('\n').filter(Boolean), label).toEqual(['ok']);
      expect((await run('cat', [at(label, 'ok', 'ref.md')])).stdout, label).toBe('fine\n');
    }
  });

  it('a cursor returned forever and a 1,000,000-entry listing stop at a paging cap or a page deadline: the log says which, skills.json holds exactly what was kept, marked partial', async (context) => {
    const { maxPages, maxItems } = DEFAULT_PAGING_LIMITS;
    const HUGE_PAGE = 5_000;
    // Each ends in one of two ways: its paging cap, or (on a busy machine: --timeout 2 here, a
    // million entries next door) one page's deadline. The one logged line says which; what was
    // kept follows exactly from it.
    const stopOf = async (label: string, cap: string, keptAtCap: number, keptBeforePage: (page: number) => number) => {
      await mount.waitForLog(new RegExp(`\\[${label}\\] listing generation: `), 60_000);
      const deadline = `page (\\d+): ${label}: skills/list: no answer within ${TIMEOUT_S * 1000} ms`;
      const lines = logLines(new RegExp(`\\[${label}\\] (${cap}|${deadline})$`));
      expect(lines, `how the ${label} listing stopped:\n${logLines(new RegExp(`\\[${label}\\]`)).join('\n')}`).toHaveLength(1);
      const problem = /\] (.*)$/.exec(lines[0]!)![1]!;
      const page = new RegExp(`^${deadline}$`).exec(problem)?.[1];
      return { problem, kept: page === undefined ? keptAtCap : keptBeforePage(Number(page)) };
    };
    // forever: its one skill on the first page, then empty pages, each with a fresh cursor.
    const forever = await stopOf('forever', `stopped after ${maxPages} pages`, 1, () => 1);
    // huge: the good skill and 5,000 entries on the first page, 5,000 on each one after.
    const huge = await stopOf('huge', `stopped at ${maxItems} entries`, maxItems, (page) => 1 + HUGE_PAGE * (page - 1));
    await context.annotate(`forever: ${forever.problem}; huge: ${huge.problem}`);
    for (const [label, stop] of [['forever', forever], ['huge', huge]] as const) {
      expect(logLines(new RegExp(`\\[${label}\\] listing generation: ${stop.kept} skills \\(partial listing\\), 1 problems$`)), label).toHaveLength(1);
    }

    // skills.json (tens of MB here: summarized in a child process) before anything is read under
    // these labels, since a read may start a re-listing that shows its own interim tree.
    const script = [
      'import json,sys',
      'd=json.load(open(sys.argv[1]))',
      'print(json.dumps({s["label"]: {"listingComplete": s["listingComplete"], "skills": len(s["skills"]), "ok": any(k["qualifiedName"] == s["label"] + "/ok" for k in s["skills"]), "problems": s["problems"]} for s in d["servers"] if s["label"] in ("forever", "huge")}))',
    ].join('\n');
    const summary = await run('python3', ['-c', script, at('skills.json')], 60_000);
    expect(summary.stderr).toBe('');
    expect(JSON.parse(summary.stdout)).toEqual({
      forever: { listingComplete: false, skills: forever.kept, ok: true, problems: [forever.problem] },
      huge: { listingComplete: false, skills: huge.kept, ok: true, problems: [huge.problem] },
    });

    // All 13 servers connected and listed, the million-entry one included, well within a minute,
    // and what was kept is served.
    expect(mountedInMs).toBeLessThan(60_000);
    expect((await run('cat', [at('forever', 'ok', 'ref.md')])).stdout).toBe('fine\n');
    expect((await run('cat', [at('huge', 'ok', 'ref.md')])).stdout).toBe('fine\n');
  });

  it('an index that is not JSON: discovery fails, logged; an index with bad entries: they are dropped and named', async () => {
    expect(logLines(/\[index-garbage\] discovery failed: index-garbage: resources\/read skill:\/\/index.json: not JSON/).length).toBeGreaterThan(0);
    expect((await run('cat', [at('index-garbage', 'ok', 'ref.md')])).stdout).toBe('fine\n');
    expect(logLines(/\[index-shape\] index entry [123]: /).length).toBe(3);
    expect(logLines(/\[index-shape\] skill skill:\/\/ok\/SKILL.md listed twice/).length).toBeGreaterThan(0);
    expect((await run('ls', [at('index-shape')])).stdout.split('\n').filter(Boolean).sort()).toEqual(['index.json', 'ok']);
    // The index's digest for SKILL.md is wrong: that one file is EIO, its neighbour is served (unverified).
    expect((await run('cat', [at('index-shape', 'ok', 'SKILL.md')])).stderr).toMatch(/Input\/output error/);
    expect((await run('cat', [at('index-shape', 'ok', 'ref.md')])).stdout).toBe('fine\n');
  });

  it('a declared directoryRead that answers -32601: directories show what is known, logged once', async () => {
    const ls = await run('ls', [at('dir-refused', 'docs')]);
    expect(ls.stderr).toBe('');
    expect(ls.stdout.split('\n').filter(Boolean)).toEqual(['guide']);
    expect((await run('cat', [at('dir-refused', 'docs', 'guide', 'SKILL.md')])).code).toBe(0);
    expect(logLines(/\[dir-refused\] resources\/directory\/read skill:\/\/docs: declared in capabilities but answered -32601/).length).toBe(1);
  });

  it('afterwards: the daemon is alive, cached content is served, the good server diffs clean', async () => {
    expect(mount.child.exitCode).toBeNull();
    const reads = requestCount(mount.log(), 'proto', 'resources/read', 'skill://good/ref.md');
    expect((await run('cat', [at('proto', 'good', 'ref.md')])).stdout).toBe('reference\n');
    expect(requestCount(mount.log(), 'proto', 'resources/read', 'skill://good/ref.md')).toBe(reads);
    const diff = await run('diff', ['-r', CORPUS_DIR, at('corpus')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    expect(diff.code).toBe(0);
  });
});
