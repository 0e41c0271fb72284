// The terminal experience, checked in a real terminal (tmux): --help, a start with
// progress then one summary line, and `status`. The daemon runs under tmux's shell, so
// this process never serves a mount; Ctrl-C, then the cleanup script, always remove it.
import { chmod, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Terminal, shellQuote } from '../support/cli-tmux.js';
import { run } from '../support/fuse-harness.js';
import { CORPUS_DIR, makeTestDir, REPO, SKILLS_MOUNT, SKILLS_SERVE, serveEntry } from '../support/mount-harness.js';

// In CI (scripts/test.sh installs tmux) a skip is a failure, so there it always runs.
const usable = (existsSync('/dev/fuse') && hasTmux()) || process.env['CI'] !== undefined;
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');
const EXAMPLES = path.join(REPO, 'examples', 'skills');
const command = (...args: string[]) => [process.execPath, SKILLS_MOUNT, ...args].map(shellQuote).join(' ');
/** The redrawn progress line, e.g. "/ 1.2s  2/3 servers connected, 1 starting; 17 skills listed from 2 servers". */
const PROGRESS = /^. \d+\.\ds  \d+\/3 servers connected, 1 starting; \d+ skills listed from \d+ servers?$/m;

describe.skipIf(!usable)('skills-mount in a terminal', () => {
  let terminal: Terminal;
  let dir: string;
  let mountpoint: string;

  beforeAll(async () => {
    dir = await makeTestDir();
    mountpoint = path.join(dir, 'mnt');
    terminal = await Terminal.open({ COLUMNS: '120' });
  });

  afterAll(async () => {
    await terminal?.key('C-c').catch(() => undefined);
    await terminal?.waitFor(/SIGINT: unmounting/, 5_000).catch(() => undefined);
    await terminal?.close();
    if (dir) await run('bash', [CLEANUP, dir]);
  });

  it('--help shows usage, commands and examples', async () => {
    // The usage is longer than the 30-row pane: its head, then the options' first lines.
    await terminal.type(`${command('--help')} | head -n 20`);
    const screen = await terminal.waitFor(/skills-mount status \[MOUNTPOINT\] \[--json\]/);
    expect(screen).toContain('usage: skills-mount MOUNTPOINT [--config FILE]');
    expect(screen).toContain('       skills-mount status [MOUNTPOINT] [--json]');
    await terminal.type(`clear; ${command('--help')} | sed -n '/^Mount options:/,+2p'`);
    expect(await terminal.waitFor(/Mount options:\s+--config FILE/)).toContain('Mount options:');
    await terminal.type(`clear; ${command('--help')} | sed -n '/^Examples:/,$p'`);
    const examples = await terminal.waitFor(/Examples:[\s\S]*skills-mount unmount/);
    expect(examples).toContain('skills-mount ~/.cache/mcp-skills --config ~/.cursor/mcp.json --only github,docs');
  });

  it('a start shows progress while servers connect, then one summary line', async () => {
    // One server takes 3 s to answer, so the progress line is on screen long enough to see.
    const slow = path.join(dir, 'slow-server.sh');
    await writeFile(slow, `#!/bin/sh\nsleep 3\nexec ${[process.execPath, SKILLS_SERVE, EXAMPLES].map(shellQuote).join(' ')}\n`);
    await chmod(slow, 0o755);
    const config = path.join(dir, 'config.json');
    await writeFile(config, JSON.stringify({ mcpServers: { demo: serveEntry(EXAMPLES), corpus: serveEntry(CORPUS_DIR), slow: { command: slow } } }));
    await terminal.type(`clear; ${command(mountpoint, '--config', config)}`);

    const during = await terminal.waitFor(PROGRESS, 20_000);
    expect(during).not.toMatch(/mounted /);
    const after = await terminal.waitFor(/mounted /, 30_000);
    const lines = after.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      new RegExp(`^skills-mount: mounted ${mountpoint} \\(3/3 servers connected: demo, corpus, slow; \\d+ skills; ready in \\d+\\.\\d s\\); Ctrl-C to unmount$`),
    );
    // The progress line is gone: the summary is the last word, and nothing was left half-drawn.
    expect(after).not.toMatch(PROGRESS);
    expect(after).toMatch(/skills-mount: \[slow\] connected/);
  });

  it('status, typed in another window, shows the mount', async () => {
    const window = await terminal.newWindow();
    await terminal.type(command('status', mountpoint), window);
    const screen = await terminal.waitFor(/recent errors/, 15_000, window);
    expect(screen).toMatch(new RegExp(`${mountpoint}  up \\d+s, pid \\d+, cache .* of 256 MiB`));
    expect(screen).toMatch(/SERVER\s+STATE\s+DISCOVERY\s+SKILLS\s+NOTES/);
    expect(screen).toMatch(/  corpus\s+connected \(2026-07-28\)\s+listing\s+15\n/);
    expect(screen).toMatch(/3 servers \(3 connected\), 25 skills/);
  });

  it('Ctrl-C unmounts', async () => {
    await terminal.key('C-c');
    await terminal.waitFor(/SIGINT: unmounting/, 10_000);
    await terminal.type('echo "exit=$?"');
    // The daemon's own bound is about 6 s (unmount, then its servers); the time it takes is
    // the SIGTERM tests' business: here, on a loaded machine, that it exits 0 at all.
    await terminal.waitFor(/^exit=0$/m, 20_000);
    expect(await readMounts()).not.toContain(mountpoint);
  });
});

async function readMounts(): Promise<string> {
  return (await run('cat', ['/proc/mounts'])).stdout;
}

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
