// Where a snapshot may be written: nowhere another user controls. The folders on the way to
// DEST's folder (links followed), that folder, the snapshots folder and the lock file must each
// belong to the user writing the snapshot (or root), and none may be writable by others; only a
// folder above DEST's may be, when it is sticky (/tmp), and DEST's own with --allow-shared-parent.
// Each refusal names the path, its owner and mode, and what to do. Knows the path rules (src/path-control.ts), nothing of snapshots' contents.
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { Log } from '../log.js';
import { ControlledPathError, entryControl, modeText, ownerProblem, pathControl, type ControlReason, type PathControlFinding } from '../path-control.js';

/**
 * Refuses DEST when anyone but `uid` and root controls its folder or a folder or link on the way
 * to it. `allowSharedParent`: DEST's folder may be writable by others (a Kubernetes emptyDir is
 * 0777 whoever can mount it); logged, and its owner, the folders above it, the snapshots folder
 * and the lock are checked still.
 */
export async function checkDestination(dest: string, uid: number | undefined, options: { allowSharedParent?: boolean; log?: Log } = {}): Promise<void> {
  if (uid === undefined) return;
  for (const finding of await pathControl(path.dirname(dest), { uid, strictTarget: true })) {
    if (finding.target && finding.reason === 'writable' && options.allowSharedParent === true) {
      options.log?.(`snapshot: ${finding.path}, the folder DEST is in, can be written by other users (mode ${modeText(finding.mode)}); going on, as --allow-shared-parent says`);
      continue;
    }
    throw new ControlledPathError(destinationMessage(dest, finding, uid), finding.path, finding.ownerUid, finding.mode);
  }
}

/** Refuses DEST's snapshots folder, or its lock file, when it exists and anyone but `uid` and root controls it. */
export function checkOwnEntry(entry: string, role: 'snapshots folder' | 'lock file', stats: Stats, dest: string, uid: number | undefined): void {
  if (uid === undefined) return;
  // A link in its place is judged by its owner (entryControl passes links: their mode means nothing).
  const reason = stats.isSymbolicLink() ? (ownerProblem(stats, uid, { rootAllowed: true }) === undefined ? undefined : 'owner') : entryControl(entry, stats, uid)?.reason;
  if (reason === undefined) return;
  const who = whoCould(reason, stats.uid, uid);
  const message =
    role === 'snapshots folder'
      ? `snapshot: refusing ${entry}, the snapshots folder of ${dest} (owner uid ${stats.uid}, mode ${modeText(stats.mode)}): it ${who} replace the snapshots in it, and so what ${dest} serves. ` +
        (reason === 'owner' ? `Check what it holds, then remove it (rm -rf ${entry}) and run again: a new one is made.` : `Check what it holds, then chmod go-w ${entry} and run again.`)
      : `snapshot: refusing the lock file ${entry} (owner uid ${stats.uid}, mode ${modeText(stats.mode)}): it ${who} hold or take over the lock of ${dest} at will. ` +
        `Someone else put it there or opened it: check the snapshots folder, remove the lock file and run again.`;
  throw new ControlledPathError(message, entry, stats.uid, stats.mode & 0o7777);
}

function destinationMessage(dest: string, finding: PathControlFinding, uid: number): string {
  const who = whoCould(finding.reason, finding.ownerUid, uid);
  const what = `(owner uid ${finding.ownerUid}, mode ${modeText(finding.mode)})`;
  const sticky = (finding.mode & 0o1000) !== 0;
  if (finding.kind === 'symbolic link') {
    return `snapshot: refusing DEST ${dest}: the symbolic link ${finding.path} on the way to it ${what} ${who} point it elsewhere, and so replace what is published at DEST. Give DEST by its real path, or choose another.`;
  }
  if (finding.target) {
    const todo =
      finding.reason === 'owner' || sticky
        ? `Choose a DEST in a folder of your own that only you can write (e.g. mkdir -m 700 DIR, DEST inside it).`
        : `Choose a DEST in a folder only you can write (e.g. mkdir -m 700 DIR, DEST inside it), or chmod go-w ${finding.path}.`;
    // Only where nobody else could write it after all (an emptyDir that only this pod's snapshot containers mount writable).
    const shared = finding.reason === 'writable' ? ' If only you can reach it in fact (a Kubernetes emptyDir), --allow-shared-parent accepts it.' : '';
    const stickyNote = finding.reason === 'writable' && sticky ? ' (its sticky bit keeps them from renaming what is yours, not from making the names DEST needs first)' : '';
    return `snapshot: refusing DEST ${dest}: the folder it is in, ${finding.path} ${what}, ${who} put their own files where DEST and its snapshots go${stickyNote}. ${todo}${shared}`;
  }
  const todo = finding.reason === 'owner' ? 'Choose a DEST elsewhere.' : `chmod go-w ${finding.path} (or chmod +t, so nobody can rename what is not theirs), or choose a DEST elsewhere.`;
  return `snapshot: refusing DEST ${dest}: ${finding.path} on the way to it ${what} ${who} rename the folders below it, and so replace what is published at DEST. ${todo}`;
}

/** "belongs to uid 65534, not to you (uid 0); that user could" / "can be written by other users; they could". */
function whoCould(reason: ControlReason, ownerUid: number, uid: number): string {
  if (reason === 'owner') return `belongs to uid ${ownerUid}, not to you (uid ${uid})${uid === 0 ? '' : ' or root'}; that user could`;
  return 'can be written by other users; they could';
}
