// When the platform refuses file watches (inotify limits, network filesystems), the
// server must keep up by rescanning periodically rather than go stale silently.
import { describe, expect, it } from 'vitest';
import { DirectoryWatcher } from '../../src/server/watch.js';
import { delay } from '../support/poll.js';

describe('DirectoryWatcher', () => {
  it('falls back to periodic rescans, with one log line, when a watch cannot be set', async () => {
    const logs: string[] = [];
    let changes = 0;
    const watcher = new DirectoryWatcher({
      onChange: () => changes++,
      log: (line) => logs.push(line),
      debounceMs: 10,
      pollMs: 20,
      watchDirectory: () => {
        throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
      },
    });
    try {
      watcher.update(['/a', '/b']);
      await delay(130);
      expect(changes).toBeGreaterThanOrEqual(3);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(/watch failed on \/a \(ENOSPC\); rescanning every 20 ms/);
    } finally {
      watcher.close();
    }
    const after = changes;
    await delay(60);
    expect(changes).toBe(after);
  });
});
