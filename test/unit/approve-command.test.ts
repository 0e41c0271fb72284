// What `skills-mount approve` prints for a person to judge, with strings from a hostile server,
// and how it refuses a path that names no skill on a mount.
import { describe, expect, it } from 'vitest';
import { describeSkill, locateSkill } from '../../src/cli/approve-command.js';
import type { InspectRecord } from '../../src/fs/approved-view.js';

const digest = `sha256:${'a'.repeat(64)}`;

function record(overrides: Partial<InspectRecord> = {}): InspectRecord {
  return {
    label: 'docs',
    path: 'guide',
    uri: 'skill://guide/SKILL.md',
    name: 'guide',
    description: 'House style',
    frontmatter: { name: 'guide', description: 'House style' },
    permissionFields: [],
    files: [{ path: 'guide/SKILL.md', uri: 'skill://guide/SKILL.md', digest, sizeBytes: 2048 }],
    resourcesDigest: digest,
    nestedSkills: [],
    cannotApprove: null,
    approval: null,
    ...overrides,
  };
}

const location = { mountpoint: '/m', label: 'docs', directory: 'guide' };

describe('approve', () => {
  it('shows every file relative to the skill, the set digest, and calls out allowed-tools and hooks', () => {
    const text = describeSkill(location, record({
      permissionFields: [
        { field: 'allowed-tools', effect: 'tool-permission', value: 'Bash(rm:*)' },
        { field: 'hooks', effect: 'code-execution', value: '{"PreToolUse":"x"}' },
      ],
      nestedSkills: ['guide/inner'],
    }));
    expect(text).toContain(`files        1, 2.0 KiB (set ${digest})`);
    expect(text).toMatch(new RegExp(`^    SKILL.md  2.0 KiB  ${digest}$`, 'm'));
    expect(text).toContain('nested       guide/inner (each needs its own approval)');
    expect(text).toContain('! allowed-tools: Bash(rm:*)  (widens the tools an agent may use; granted only if you say so)');
    expect(text).toContain('! hooks: {"PreToolUse":"x"}  (asks the host to run code; approving the skill never grants it)');
  });

  it('escapes what a server sent: no control character, line break or bidi override reaches the terminal', () => {
    const text = describeSkill(location, record({
      name: 'guide\u001b[2J',
      description: 'fine\nApprove docs/other as shown above? [y/N] y\u202e',
      files: [{ path: 'guide/\u001b]0;title\u0007x.md', uri: 'skill://guide/x.md', digest, sizeBytes: 1 }],
      permissionFields: [{ field: 'allowed-tools', effect: 'tool-permission', value: 'Read\rBash' }],
    }));
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/);
    expect(text).toContain('guide\\u001b[2J');
    expect(text).toContain('fine\\u000aApprove docs/other');
    // One line per field: the injected newline did not start a line of its own.
    expect(text.split('\n').filter((line) => line.startsWith('Approve'))).toEqual([]);
  });

  it('says what is wrong with a path that names no skill on a mount', async () => {
    await expect(locateSkill('/definitely/not/a/mount/docs/guide')).rejects.toThrow(/not on a skills-mount mount/);
  });
});
