// Where the libfuse 3 addon is looked for, in order: SKILLS_FUSE_ADDON alone when set, else a
// source build (native/build: a checkout, or npm run build-native) before the package's prebuild
// for this platform and arch (prebuilds/<platform>-<arch>/, linux-x64 and linux-arm64 shipped).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addonCandidates } from '../../src/fuse/lowlevel/addon.js';

describe('the addon candidates', () => {
  it('a source build first, then the prebuild of this platform and arch', () => {
    const candidates = addonCandidates({}, 'linux', 'arm64');
    expect(candidates.map((c) => c.origin)).toEqual(['source-build', 'prebuild']);
    expect(candidates[0]!.path.endsWith(path.join('native', 'build', 'Release', 'skills_fuse.node'))).toBe(true);
    expect(candidates[1]!.path.endsWith(path.join('prebuilds', 'linux-arm64', 'skills_fuse.node'))).toBe(true);
    expect(path.dirname(path.dirname(path.dirname(candidates[1]!.path)))).toBe(path.dirname(path.dirname(path.dirname(path.dirname(candidates[0]!.path)))));
  });

  it('SKILLS_FUSE_ADDON alone when set (resolved), nothing to fall back to', () => {
    expect(addonCandidates({ SKILLS_FUSE_ADDON: 'x/y.node' }, 'linux', 'x64')).toEqual([{ origin: 'override', path: path.resolve('x/y.node') }]);
  });

  it('macOS and Windows are asked for prebuilds that do not exist (the mount refuses before loading)', () => {
    expect(addonCandidates({}, 'darwin', 'arm64')[1]!.path).toContain(path.join('prebuilds', 'darwin-arm64'));
  });
});
