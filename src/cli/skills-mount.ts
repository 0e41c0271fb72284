#!/usr/bin/env node
// skills-mount: mounts MCP servers' skills read-only (the default command), or reports on
// (`status`) and removes (`unmount`) mounts, writes them as files where no FUSE is (`snapshot`,
// `verify`), manages the disk cache (`cache`) and the
// approvals of the approved view (`approve`, `revoke`, `approvals`), a project's lockfile (`lock`,
// `unlock`, `outdated`, `update`, `verify --project`), puts approved or locked skills into coding
// agents' own skills folders (`link`, `unlink`, `verify --links`), and says what this machine offers (`doctor`).
// Dispatches; each command lives in its module, loaded only when it runs (a command's start pays
// for no other's server or client stack), and ends through exitAfterDrain (a slow pipe gets all of it).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { routeSdkLines } from '../log.js';
import { escapeForLog } from '../format/escape.js';
import { parseCommandLine, type Command } from './command-line.js';
import { exitAfterDrain, watchOutputStreams } from './process-exit.js';
import { PACKAGE_ROOT } from '../config/config.js';
import { HELP, USAGE } from './help.js';
import { MountOptionError } from './fstab-options.js';

async function main(argv: string[]): Promise<void> {
  // The SDK writes its own lines to the console: from the start, they go through the same redaction and escaping.
  routeSdkLines();
  // A reader that goes away (`| head`) ends what it reads, never the command with a throw.
  watchOutputStreams();
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    // A refused -o option is one line: mount(8) prints it as the reason the mount failed.
    const usage = error instanceof MountOptionError ? '' : `\n${USAGE}`;
    process.stderr.write(`skills-mount: ${(error as Error).message}\n${usage}Run skills-mount --help for options and examples.\n`);
    return exitAfterDrain(2);
  }
  switch (command.command) {
    case 'help':
      process.stdout.write(HELP);
      return exitAfterDrain(0);
    case 'version':
      process.stdout.write(`skills-mount ${packageVersion()}\n`);
      return exitAfterDrain(0);
    case 'status': {
      const [{ collectStatus, renderStatusText }, { linkedRoots }, { loadPolicy }] = await Promise.all([import('./status.js'), import('./link-command.js'), import('../team/policy.js')]);
      const report = await collectStatus(command.mountpoint);
      const links = await linkedRoots(process.env, homedir());
      const policy = (await loadPolicy({ env: process.env, home: homedir() })).describe();
      if (policy.inForce) report.policy = { files: policy.files, lines: policy.lines };
      if (links.length > 0) report.links = links.map(({ root, harnesses, scope, entries, problems }) => ({ root, harnesses, scope, problems, entries: Object.entries(entries).map(([name, entry]) => ({ name, label: entry.label, skillUri: entry.skillUri, qualified: entry.qualified })) }));
      process.stdout.write(command.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatusText(report));
      // Exit explicitly: nothing may keep this process waiting on a mount.
      return exitAfterDrain(report.mounts.every((mount) => mount.state === 'ok') ? 0 : 1);
    }
    case 'unmount': {
      const { unmount } = await import('./unmount.js');
      process.stdout.write(`${await unmount(command.mountpoint)}\n`);
      return exitAfterDrain(0);
    }
    case 'cache': {
      const { runCacheCommand } = await import('./cache-command.js');
      const { text, exitCode } = await runCacheCommand(command);
      process.stdout.write(text);
      return exitAfterDrain(exitCode);
    }
    case 'approve':
    case 'revoke': {
      const [{ runApprove, runRevoke, terminalIo }, { processIo, syncAfterApprovalChange }] = await Promise.all([import('./approve-command.js'), import('./link-command.js')]);
      const code = command.command === 'approve' ? await runApprove(command, terminalIo()) : await runRevoke(command, terminalIo());
      // Every linked skills root follows before the command returns.
      const reports = await syncAfterApprovalChange(processIo(), command.servers);
      for (const report of reports) {
        const changes = [...report.added.map((name) => `+${name}`), ...report.replaced.map((name) => `~${name}`), ...report.removed.map((name) => `-${name}`)];
        if (changes.length > 0) process.stdout.write(`linked ${report.root}: ${changes.join(' ')}\n`);
      }
      return exitAfterDrain(code);
    }
    case 'link': {
      const { processIo, runLink } = await import('./link-command.js');
      return exitAfterDrain(await runLink(command.options, processIo()));
    }
    case 'unlink': {
      const { processIo, runUnlink } = await import('./link-command.js');
      return exitAfterDrain(await runUnlink(command, processIo()));
    }
    case 'approvals': {
      const { runApprovals, terminalIo } = await import('./approve-command.js');
      return exitAfterDrain(await runApprovals(command.json, terminalIo()));
    }
    case 'lock':
    case 'unlock': {
      const [{ runLock, runUnlock }, { terminalIo }] = await Promise.all([import('./lock-command.js'), import('./approve-command.js')]);
      return exitAfterDrain(command.command === 'lock' ? await runLock(command.options, terminalIo()) : await runUnlock(command, terminalIo()));
    }
    case 'outdated':
    case 'update': {
      const [{ runOutdated, runUpdate }, { terminalIo }] = await Promise.all([import('./outdated-command.js'), import('./approve-command.js')]);
      return exitAfterDrain(command.command === 'outdated' ? await runOutdated(command.options, terminalIo()) : await runUpdate(command.options, terminalIo()));
    }
    case 'verify-project': {
      const { processIo, runVerifyProject } = await import('./link-command.js');
      const { text, exitCode } = await runVerifyProject(command, processIo());
      process.stdout.write(text);
      return exitAfterDrain(exitCode);
    }
    case 'login':
    case 'logout': {
      const { processLoginIo, runLogin, runLogout } = await import('./login-command.js');
      return exitAfterDrain(command.command === 'login' ? await runLogin(command.options, processLoginIo()) : await runLogout(command.options, processLoginIo()));
    }
    case 'mount': {
      if (command.options.background) {
        const { mountInBackground } = await import('./background-mount.js');
        return exitAfterDrain(await mountInBackground(argv, { mountpoint: command.options.mountpoint, logFile: command.options.logFile, startupTimeoutMs: command.options.startupTimeoutMs }));
      }
      const { runMount } = await import('./mount-command.js');
      return runMount(command.options);
    }
    case 'serve': {
      const { runServe } = await import('./serve-command.js');
      return exitAfterDrain(await runServe(command.options));
    }
    case 'snapshot': {
      const { runSnapshot } = await import('./snapshot-command.js');
      return exitAfterDrain(await runSnapshot(command.options));
    }
    case 'verify-links': {
      const { processIo, runVerifyLinks } = await import('./link-command.js');
      const { text, exitCode } = await runVerifyLinks(command.json, processIo());
      process.stdout.write(text);
      return exitAfterDrain(exitCode);
    }
    case 'doctor': {
      const { runDoctor } = await import('./doctor-command.js');
      const { text, exitCode } = await runDoctor(command.options);
      process.stdout.write(text);
      return exitAfterDrain(exitCode);
    }
    case 'verify': {
      const { runVerify } = await import('./verify-command.js');
      // Lines of the servers verify lists (--against-server), escaped as the snapshot's are.
      const { text, exitCode } = await runVerify(command.options, (line) => process.stderr.write(`skills-mount: ${escapeForLog(line)}\n`));
      process.stdout.write(text);
      return exitAfterDrain(exitCode);
    }
  }
}

function packageVersion(): string {
  // Read at run time (not bundled at build time) so the version is always package.json's.
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`skills-mount: ${message}\n`);
  void exitAfterDrain(error instanceof ConfigError ? 2 : 1);
});
