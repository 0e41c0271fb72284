// Checks, before starting, that a stdio server's command can be run, so "not found"
// comes with what to do instead of a bare "spawn ENOENT" retried forever.
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

/** undefined when `command` resolves to an executable file; otherwise what is wrong and what to do. */
export async function commandProblem(command: string, cwd: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (command.includes('/')) {
    const file = path.resolve(cwd ?? process.cwd(), command);
    return (await isExecutable(file)) ? undefined : `command ${file} ${await whyNot(file)}; fix "command" in the config`;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && (await isExecutable(path.join(dir, command)))) return undefined;
  }
  // PATH is the daemon's own (under systemd, the unit's), which may not be your shell's.
  return `command "${command}" is not on PATH${env.PATH ? '' : ' (PATH is unset)'}; install it, or give its full path in "command"`;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function whyNot(file: string): Promise<string> {
  try {
    const info = await stat(file);
    return info.isFile() ? 'is not executable (chmod +x)' : 'is not a file';
  } catch {
    return 'does not exist';
  }
}
