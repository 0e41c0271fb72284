// A machine for `skills-mount doctor` tests: Linux with every piece in place, as a user who is not
// root, two servers configured (demo over stdio, docs over HTTP), unless a test's changes say otherwise.
import type { DoctorProbes } from '../../src/cli/doctor-command.js';
import type { LabelledServer, MountConfig } from '../../src/config/config.js';
import { linuxProbes } from './platform-probes.js';

export const DEMO: LabelledServer = { label: 'demo', config: { kind: 'stdio', command: 'skills-serve', args: [] } as unknown as LabelledServer['config'] };
export const DOCS: LabelledServer = { label: 'docs', config: { kind: 'http', url: 'https://docs.example/mcp' } as unknown as LabelledServer['config'] };

/** A Linux machine where everything is in place, as a user who is not root, unless `changes` say otherwise. */
export function machine(changes: Partial<DoctorProbes> = {}): DoctorProbes {
  return {
    ...linuxProbes(),
    kernelRelease: '6.1.0-28-amd64',
    readText: async (file) => (file === '/etc/fuse.conf' ? '# comment\nuser_allow_other\n' : undefined),
    setuidRoot: async () => true,
    addon: async () => ({ loaded: true, origin: 'prebuild', path: '/pkg/prebuilds/linux-x64/skills_fuse.node' }),
    loadConfig: async (): Promise<MountConfig> => ({ origin: '/home/u/.config/skills-mount/config.json', servers: [DEMO, DOCS], notes: [] }),
    reach: async () => ({ reached: true, skills: 5, protocolVersion: '2026-07-28' }),
    signIn: async () => ({ signedIn: ['docs'], signedOut: [] }),
    linkStore: () => '/home/u/.local/share/skills-mount/links',
    storeFilesystem: async () => ({ mountpoint: '/home', noexec: false }),
    policy: async () => ({ inForce: false, files: [], lines: [] }),
    ...changes,
  };
}

/** The report's line for a check, by its name. */
export function line(text: string, name: string): string {
  const found = text.split('\n').find((l) => l.slice(6).startsWith(`${name} `));
  if (found === undefined) throw new Error(`no line for ${name} in:\n${text}`);
  return found;
}
