// The ledger's watch of the approvals file: a change written by another process is read and
// reported without any access to the mount (so the kernel may hold the approved view for long),
// and a watch that stops reporting (its directory replaced) says so, reports a change so that
// whatever the kernel holds is asked again, and is taken up again at the next refresh.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalLedger } from '../../src/approvals/approval-ledger.js';
import { ApprovalStore } from '../../src/approvals/approval-store.js';
import { waitFor } from '../support/poll.js';
import { TempDirs } from '../support/temp-dir.js';

const dirs = new TempDirs('approval-ledger-');
const ledgers: ApprovalLedger[] = [];
afterEach(async () => {
  for (const ledger of ledgers.splice(0)) ledger.close();
  await dirs.removeAll();
});

const DIGEST = `sha256:${'a'.repeat(64)}`;

/** A ledger over `<temp>/skills-mount/approvals.json` whose clock never moves: only forced reads see a change. */
async function watchedLedger(options: { createDirectory: boolean }) {
  const root = await dirs.make();
  const file = path.join(root, 'skills-mount', 'approvals.json');
  if (options.createDirectory) await mkdir(path.dirname(file));
  const logged: string[] = [];
  const ledger = await ApprovalLedger.open(file, (line) => logged.push(line), () => 0);
  ledgers.push(ledger);
  let changes = 0;
  ledger.onChange(() => (changes += 1));
  await ledger.watch();
  /** Approves one skill from "another process": a store of its own writes the file. */
  const approve = async (name: string) => {
    const store = await ApprovalStore.load(file);
    await store.approve({ label: 'docs', skillUri: `skill://${name}/SKILL.md`, name, resources: [{ uri: `skill://${name}/SKILL.md`, digest: DIGEST, sizeBytes: 10 }], allowedToolsApproved: false, allowedTools: null });
  };
  return { file, ledger, logged, approve, changes: () => changes };
}

describe('the approvals ledger watches its file', () => {
  it('reads and reports an approval written by another process, with no access to the mount', async () => {
    const { ledger, approve, changes } = await watchedLedger({ createDirectory: true });
    expect(ledger.watched).toBe(true);
    const before = changes();
    await approve('guide');
    // The clock is frozen: without the watch nothing would read the file again.
    await waitFor(() => ledger.approval('docs', 'skill://guide/SKILL.md') !== undefined, 2_000, 'the approval to be read');
    expect(changes()).toBeGreaterThan(before);
  });

  it('reports a file that became unreadable at once (it then grants nothing)', async () => {
    const { ledger, approve, file } = await watchedLedger({ createDirectory: true });
    await approve('guide');
    await waitFor(() => ledger.approval('docs', 'skill://guide/SKILL.md') !== undefined, 2_000, 'the approval to be read');
    await writeFile(file, '{ not json');
    await waitFor(() => ledger.problem !== undefined, 2_000, 'the broken file to be seen');
    expect(ledger.approval('docs', 'skill://guide/SKILL.md')).toBeUndefined();
  });

  it('without the directory, does not claim to watch; watches once a refresh finds it', async () => {
    const { ledger, file, approve } = await watchedLedger({ createDirectory: false });
    expect(ledger.watched).toBe(false);
    await mkdir(path.dirname(file));
    await ledger.refresh(true);
    await waitFor(() => ledger.watched, 2_000, 'the watch to begin');
    await approve('guide');
    await waitFor(() => ledger.approval('docs', 'skill://guide/SKILL.md') !== undefined, 2_000, 'the approval to be read through the watch');
  });

  it('a replaced directory ends the watch with a change reported and a log line, and the new one is watched', async () => {
    const { ledger, file, approve, logged, changes } = await watchedLedger({ createDirectory: true });
    await approve('guide');
    await waitFor(() => ledger.approval('docs', 'skill://guide/SKILL.md') !== undefined, 2_000, 'the approval to be read');
    const before = changes();
    const directory = path.dirname(file);
    await rename(directory, `${directory}.old`);
    await mkdir(directory);
    await waitFor(() => logged.some((line) => /its directory was replaced or removed; watching it again/.test(line)), 2_000, 'the lost watch to be noticed');
    expect(changes()).toBeGreaterThan(before);
    // The new directory holds no file: nothing is granted.
    await waitFor(() => ledger.approval('docs', 'skill://guide/SKILL.md') === undefined, 2_000, 'the old approval to go');
    // The clock is frozen: only a watch of the new directory can read what is written there.
    await approve('other');
    await waitFor(() => ledger.approval('docs', 'skill://other/SKILL.md') !== undefined, 2_000, 'the new directory\'s approval to be read');
    expect(ledger.watched).toBe(true);
  });
});
