// Another user for tests of what someone else may plant or control: uid 65534 (nobody), through
// setpriv. Such tests need root to become that user; they run whenever we are root, and always
// under CI (where root is guaranteed: as anyone else they fail rather than skip).
import { run } from './fuse-harness.js';

export const OTHER_UID = 65534;
/** Whether a test may act as OTHER_UID here (false only off CI as a user who is not root). */
export const canActAsOtherUser = process.getuid?.() === 0 || Boolean(process.env.CI);

/** Runs a command as OTHER_UID (no supplementary groups); rejects when it fails. */
export async function asOtherUser(command: string, args: string[]): Promise<string> {
  const result = await run('setpriv', [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', '--', command, ...args]);
  if (result.code !== 0) throw new Error(`as uid ${OTHER_UID}: ${command} ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}
