// From `approve` returning to the skill listed in a running Claude Code session, with a mount
// and without (issue 28): runs link-pickup-session.ts (the harness kit is TypeScript) through
// vite-node, which vitest brings. Needs Claude Code in .cache/harnesses (scripts/harnesses.sh);
// without it the rows say so.
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { REPO } from '../lib/paths.mjs';

const SESSION = path.join(REPO, 'bench', 'workloads', 'link-pickup-session.ts');
const VITE_NODE = path.join(REPO, 'node_modules', 'vite-node', 'vite-node.mjs');

/** { version, fuse: ms[], noFuse: ms[] } or { skipped: why }. */
export async function measureLinkPickup({ workDir, samples, log }) {
  const out = path.join(workDir, 'link-pickup.json');
  const child = spawn(process.execPath, [VITE_NODE, SESSION], { cwd: REPO, env: { ...process.env, PICKUP_SAMPLES: String(samples), PICKUP_OUT: out }, stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  let logged = 0;
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
    // Whole lines only: a chunk may end mid-line.
    const end = stderr.lastIndexOf('\n') + 1;
    for (const line of stderr.slice(logged, end).split('\n')) if (line.startsWith('link pickup')) log(line);
    logged = Math.max(logged, end);
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`link pickup: exit ${code}\n${stderr.slice(-2_000)}`);
  const result = JSON.parse(await readFile(out, 'utf8'));
  await rm(out, { force: true });
  return result;
}
