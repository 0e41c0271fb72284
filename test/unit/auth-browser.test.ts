// $BROWSER as people set it: a command with arguments (`node script.mjs`, `firefox --new-window`),
// quotes around a path with spaces, `%s` where the URL goes, several commands separated as PATH is.
import { describe, expect, it } from 'vitest';
import { browserCommands } from '../../src/auth/browser.js';

describe('$BROWSER', () => {
  it('is split into words as a shell would, without running one; several commands are tried in order', () => {
    expect(browserCommands({ BROWSER: '/usr/bin/node /opt/my browser.mjs' }, ':')).toEqual([['/usr/bin/node', '/opt/my', 'browser.mjs']]);
    expect(browserCommands({ BROWSER: `node "/opt/my browser.mjs" --flag` }, ':')).toEqual([['node', '/opt/my browser.mjs', '--flag']]);
    expect(browserCommands({ BROWSER: `firefox %s:lynx` }, ':')).toEqual([['firefox', '%s'], ['lynx']]);
    expect(browserCommands({ BROWSER: `a\\ b 'c;d' $(x)` }, ':')).toEqual([['a b', 'c;d', '$(x)']]);
  });

  it('without $BROWSER: xdg-open where there is a display, else nothing (the URL is printed)', () => {
    expect(browserCommands({ DISPLAY: ':0' })).toEqual([['xdg-open']]);
    expect(browserCommands({ WAYLAND_DISPLAY: 'wayland-0' })).toEqual([['xdg-open']]);
    expect(browserCommands({})).toEqual([]);
  });
});
