// The configuration a run judges project lockfiles with, as judged-roots.ts names it: the file it
// reads (the default one when none is given), the --server flags only by digest, --only in any order.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationOf, judgesLock } from '../../src/link/judged-roots.js';

const where = { env: { XDG_CONFIG_HOME: '/home/me/.config' }, home: '/home/me' };
const none = { configPath: undefined, serverFlags: [], only: [] };

describe('configurationOf', () => {
  it('names the file (absolute, the default one when none is given), and the same selection the same way', () => {
    expect(configurationOf(none, where)).toBe('/home/me/.config/skills-mount/config.json');
    expect(configurationOf({ ...none, configPath: '.mcp.json' }, where)).toBe(path.resolve('.mcp.json'));
    expect(configurationOf({ ...none, only: ['b', 'a'] }, where)).toBe(configurationOf({ ...none, only: ['a', 'b'] }, where));
    expect(configurationOf({ ...none, only: ['a'] }, where)).not.toBe(configurationOf(none, where));
  });

  it('--server flags by digest alone (a URL may hold a token): no default file, another digest for another server', () => {
    const flagged = configurationOf({ ...none, serverFlags: ['team=https://example.com/mcp?token=SECRET'] }, where);
    expect(flagged).toMatch(/^no file --server sha256:[0-9a-f]{64}$/);
    expect(flagged).not.toContain('SECRET');
    expect(configurationOf({ ...none, serverFlags: ['team=https://example.com/other'] }, where)).not.toBe(flagged);
  });
});

describe('judgesLock', () => {
  it('only the configuration a root recorded; a root that recorded none, by no run', () => {
    expect(judgesLock({ configuration: '/b/.mcp.json' }, '/b/.mcp.json')).toBe(true);
    expect(judgesLock({ configuration: '/b/.mcp.json' }, '/a/.mcp.json')).toBe(false);
    expect(judgesLock({}, '/b/.mcp.json')).toBe(false);
  });
});
