// A person putting their own link at an entry's name while link replaces or removes that entry.
// Whatever they put there is theirs and is never lost: link sets its entry aside before judging
// it, and when what it set aside turns out to be theirs and the name has been taken again in the
// meantime, theirs is kept beside the name (NAME.skills-mount-kept-<time>) and the report says so.
// First the worst interleaving, forced through the fs seam link-sync uses; then rounds of a real
// race against a thread that swaps links in at random moments.
import { renameSync, symlinkSync } from 'node:fs';
import { mkdir, readdir, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { syncLinks, type ContentSource, type RootRequest } from '../../src/link/link-sync.js';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { pdfApproval } from '../support/link-approval.js';
import { makeTempDir } from '../support/temp-dir.js';

/** Run around link's rename of `watched` out of the root: `before` just ahead of it, `after` just behind it. */
const seam: { watched?: string; before?: () => void; after?: () => void } = {};

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const rename = async (...args: Parameters<typeof real.rename>) => {
    if (seam.watched === undefined || args[0] !== seam.watched) return real.rename(...args);
    const { before, after } = seam;
    seam.watched = undefined;
    before?.();
    try {
      return await real.rename(...args);
    } finally {
      after?.();
    }
  };
  return { ...real, rename, default: { ...real, rename } };
});

const made: string[] = [];
afterEach(async () => {
  seam.watched = undefined;
  for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
});

const approval = pdfApproval;

interface World {
  dir: string;
  store: string;
  root: string;
  entry: string;
}

/** A root where link has put its entry `pdf` (version "v"). */
async function linkedWorld(): Promise<World> {
  const dir = await makeTempDir('skills-mount-link-race-');
  made.push(dir);
  const store = path.join(dir, 'home', '.local', 'share', 'skills-mount', 'links');
  const root = path.join(dir, 'home', '.claude', 'skills');
  const request: RootRequest = { root, harness: 'claude-code', scope: 'user' };
  const first = approval('v');
  await syncLinks({ store, approvals: [first.approval], content: first.content, log: () => {}, link: [request] });
  const entry = path.join(root, 'pdf');
  expect(await readlink(entry)).toContain('/objects/docs/');
  return { dir, store, root, entry };
}

/** A person's own skill folder, and a way to swap a link to it in at `at` (by rename(2), as `ln -sfn` and `mv -T` do). */
async function theirOwn(world: World, name: string): Promise<{ target: string; swapIn: () => void }> {
  const target = path.join(world.dir, name);
  await mkdir(target, { recursive: true });
  return {
    target,
    swapIn: () => {
      symlinkSync(target, `${target}.link`);
      renameSync(`${target}.link`, world.entry);
    },
  };
}

async function strandedInStore(store: string): Promise<string[]> {
  return (await readdir(path.join(store, 'tmp')).catch(() => [] as string[])).filter((name) => name.startsWith('aside-'));
}

describe("link never loses a person's entry it set aside", () => {
  for (const act of ['replaces (approved anew)', 'removes (the approval revoked)'] as const) {
    it(`${act}: theirs, set aside and then found taken again, is kept beside its name and reported`, async () => {
      const world = await linkedWorld();
      const first = await theirOwn(world, 'their-pdf');
      const second = await theirOwn(world, 'their-pdf-too');
      // Theirs lands just before link moves the entry out (so link moves theirs), and another of
      // theirs just after (so the name is taken again when link would put the first one back).
      seam.watched = world.entry;
      seam.before = first.swapIn;
      seam.after = second.swapIn;
      const next = act.startsWith('removes') ? approval('v', { revoked: true }) : approval('vv');
      const [report] = await syncLinks({ store: world.store, approvals: [next.approval], content: next.content, log: () => {} });
      expect(seam.watched, 'the interleaving happened').toBeUndefined();
      expect(await readlink(world.entry)).toBe(second.target);
      const kept = (await readdir(world.root)).filter((name) => name.startsWith('pdf.skills-mount-kept-'));
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatch(/^pdf\.skills-mount-kept-\d{8}T\d{6}Z$/);
      expect(await readlink(path.join(world.root, kept[0]!))).toBe(first.target);
      expect(report!.problems.join('\n')).toContain(`is kept beside it as ${kept[0]}`);
      expect(await strandedInStore(world.store)).toEqual([]);
      // The next sync leaves both of theirs as they are.
      await syncLinks({ store: world.store, approvals: [next.approval], content: next.content, log: () => {} });
      expect(await readlink(world.entry)).toBe(second.target);
      expect(await readlink(path.join(world.root, kept[0]!))).toBe(first.target);
      await rm(path.join(world.root, kept[0]!));
    });
  }
});

/** A thread of its own that, once told to go, waits `delayNs` and swaps a link to `target` in at `at`, `swaps` times. */
const SWAPPER = `
const { parentPort } = require('node:worker_threads');
const { symlinkSync, renameSync } = require('node:fs');
const spin = (ns) => { const until = process.hrtime.bigint() + BigInt(ns); while (process.hrtime.bigint() < until) {} };
parentPort.on('message', ({ go, delayNs, gapNs, swaps, target, at }) => {
  while (Atomics.load(go, 0) === 0) Atomics.wait(go, 0, 0);
  spin(delayNs);
  for (let i = 0; i < swaps; i++) {
    if (i > 0) spin(gapNs);
    symlinkSync(target, target + '.link');
    renameSync(target + '.link', at);
  }
  parentPort.postMessage('done');
});
`;

/** Rounds of a real race; the swaps land anywhere in the sync, from before it lists the root to after it is done. */
const ROUNDS = 30;

describe("link against a person swapping their own link in, in a tight race", () => {
  it(`in ${ROUNDS} rounds their link is never missing from the root, and nothing of theirs is left in the store`, async () => {
    const swapper = new Worker(SWAPPER, { eval: true });
    try {
      const outcomes = new Map<string, number>();
      // About how long a sync takes on this machine now (the longest seen): the swaps are spread over
      // that and a bit beyond. Under load a sync can take several times the first one, so it adapts.
      let syncNs = 0;
      // Rounds past ROUNDS run only while the race has not yet landed on both sides of link's work.
      for (let round = 0; round < ROUNDS || (outcomes.size < 2 && round < 3 * ROUNDS); round++) {
        const linkedAt = performance.now();
        const world = await linkedWorld();
        syncNs = Math.max(syncNs, (performance.now() - linkedAt) * 1_000_000);
        const theirs = await theirOwn(world, 'their-pdf');
        const go = new Int32Array(new SharedArrayBuffer(4));
        const swapped = new Promise((resolve) => swapper.once('message', resolve));
        // Spread over the whole sync: early (before link lists the root) to late (after it placed its entry).
        const delayNs = Math.floor((((round % ROUNDS) + Math.random()) / ROUNDS) * 1.5 * syncNs);
        swapper.postMessage({ go, delayNs, gapNs: Math.floor(Math.random() * 200_000), swaps: 1 + (round % 3), target: theirs.target, at: world.entry });
        const next = approval('vv');
        const syncAt = performance.now();
        Atomics.store(go, 0, 1);
        Atomics.notify(go, 0);
        const [report] = await syncLinks({ store: world.store, approvals: [next.approval], content: next.content, log: () => {} });
        syncNs = Math.max(syncNs, (performance.now() - syncAt) * 1_000_000);
        await swapped;
        const where = `round ${round}: ${report!.problems.join('; ')}`;
        expect(await readlink(world.entry).catch(() => 'missing'), where).toBe(theirs.target);
        for (const name of await readdir(world.root)) {
          if (name.includes('.skills-mount-kept-')) expect(report!.problems.join('\n'), where).toContain(name);
        }
        expect(await strandedInStore(world.store), where).toEqual([]);
        const outcome = report!.problems.length === 0 ? 'linked, then theirs over it' : report!.problems.join('; ').replace(/\d{8}T\d{6}Z/, '<time>');
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      // The race did land on both sides of link's work, or it proves little.
      expect(outcomes.size, [...outcomes].map(([what, count]) => `${count}x ${what}`).join('\n')).toBeGreaterThanOrEqual(2);
    } finally {
      await swapper.terminate();
    }
  }, 300_000);
});
