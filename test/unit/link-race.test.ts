// A user's own link renamed over a linked entry at the worst moment: right after link read the entry
// and judged it its own, before it removes or replaces it. readlink is wrapped so that the rename
// lands exactly there, every time (a timing race would hit that window a few times in a hundred).
// Nothing of the user's may be removed or replaced: link sets an entry aside before it judges it.
import { renameSync, symlinkSync } from 'node:fs';
import { mkdir, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { syncLinks, type ContentSource, type RootRequest } from '../../src/link/link-sync.js';
import { pdfApproval } from '../support/link-approval.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * Called after the readlink of `watched` that follows `skip` others: the first is the sync's
 * listing of its entries, the next the check right before it acts on one.
 */
const race: { watched?: string; skip: number; afterCheck?: () => void } = { skip: 0 };

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const wrapped = async (...args: Parameters<typeof real.readlink>) => {
    const text = await real.readlink(...args);
    if (race.afterCheck && args[0] === race.watched && race.skip-- === 0) {
      const act = race.afterCheck;
      race.afterCheck = undefined;
      act();
    }
    return text;
  };
  return { ...real, readlink: wrapped, default: { ...real, readlink: wrapped } };
});

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
});

const approval = pdfApproval;

describe('link against a user renaming over its entry between check and act', () => {
  for (const act of ['removes (the approval revoked)', 'replaces (approved anew)'] as const) {
    it(`${act}: the user's link stays`, async () => {
      const dir = await makeTempDir('skills-mount-link-race-');
      made.push(dir);
      const store = path.join(dir, 'home', '.local', 'share', 'skills-mount', 'links');
      const root = path.join(dir, 'home', '.claude', 'skills');
      const theirs = path.join(dir, 'their-pdf');
      await mkdir(theirs, { recursive: true });
      const request: RootRequest = { root, harness: 'claude-code', scope: 'user' };
      const first = approval('v');
      await syncLinks({ store, approvals: [first.approval], content: first.content, log: () => {}, link: [request] });
      const entry = path.join(root, 'pdf');
      const ours = await readlink(entry);
      expect(ours).toContain('/objects/docs/');
      race.watched = entry;
      race.skip = 1;
      race.afterCheck = () => {
        symlinkSync(theirs, `${theirs}.link`);
        renameSync(`${theirs}.link`, entry);
      };
      const next = act.startsWith('removes') ? approval('v', { revoked: true }) : approval('vv');
      const [report] = await syncLinks({ store, approvals: [next.approval], content: next.content, log: () => {} });
      expect(race.afterCheck, 'the rename happened').toBeUndefined();
      expect(await readlink(entry)).toBe(theirs);
      if (act.startsWith('replaces')) expect(report!.problems.join('\n')).toMatch(/pdf is not linked: pdf was changed by someone else meanwhile; left as it is/);
      await rm(`${theirs}.link`, { force: true });
    });
  }
});
