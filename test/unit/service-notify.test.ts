// serviceNotifier (src/fuse/service-notify.ts) with a fake datagram sink: which sd_notify messages
// leave, in what order, which variables leave the environment, and when the watchdog is fed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serviceNotifier } from '../../src/fuse/service-notify.js';

const SOCKET = '/run/user/1000/systemd/notify';
const PID = 4242;

function sink(errno = 0) {
  const sent: string[] = [];
  const logged: string[] = [];
  const send = vi.fn((socketPath: string, message: string) => {
    expect(socketPath).toBe(SOCKET);
    sent.push(message);
    return errno;
  });
  return { sent, logged, send, log: (line: string) => void logged.push(line) };
}

describe('serviceNotifier', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends nothing and is inactive without NOTIFY_SOCKET, yet takes WATCHDOG_* out of the environment', () => {
    const env: NodeJS.ProcessEnv = { WATCHDOG_USEC: '1000000', WATCHDOG_PID: String(PID), HOME: '/home/a' };
    const { send, log } = sink();
    const notifier = serviceNotifier(env, { log, send, pid: PID });
    expect(notifier.active).toBe(false);
    notifier.status('starting');
    notifier.ready('mounted', async () => undefined);
    vi.advanceTimersByTime(5_000);
    notifier.stopping();
    expect(send).not.toHaveBeenCalled();
    expect(env).toEqual({ HOME: '/home/a' });
  });

  it('takes NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID out of the environment the servers inherit', () => {
    const env: NodeJS.ProcessEnv = { NOTIFY_SOCKET: SOCKET, WATCHDOG_USEC: '1000000', WATCHDOG_PID: String(PID), PATH: '/usr/bin' };
    const { send, log } = sink();
    expect(serviceNotifier(env, { log, send, pid: PID }).active).toBe(true);
    expect(env).toEqual({ PATH: '/usr/bin' });
  });

  it('sends STATUS lines, then READY=1 with a last STATUS, then STOPPING=1; each STATUS is one line', () => {
    const { sent, send, log } = sink();
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET }, { log, send, pid: PID });
    notifier.status('starting 2 servers');
    notifier.status('1/2 servers connected\nmounting');
    notifier.ready('mounted /m: 2/2 servers\r\nconnected', async () => undefined);
    vi.advanceTimersByTime(10_000);
    notifier.stopping();
    expect(sent).toEqual(['STATUS=starting 2 servers', 'STATUS=1/2 servers connected mounting', 'READY=1\nSTATUS=mounted /m: 2/2 servers connected', 'STOPPING=1']);
  });

  it('never sends READY=1 after STOPPING=1 (a stop that came while mounting)', () => {
    const { sent, send, log } = sink();
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET, WATCHDOG_USEC: '200000' }, { log, send, pid: PID });
    notifier.stopping();
    notifier.ready('mounted', async () => undefined);
    vi.advanceTimersByTime(1_000);
    expect(sent).toEqual(['STOPPING=1']);
  });

  it('feeds the watchdog every half WATCHDOG_USEC while the mount answers, and withholds it, saying why, while it does not', async () => {
    const { sent, logged, send, log } = sink();
    let problem: string | undefined;
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET, WATCHDOG_USEC: '1000000', WATCHDOG_PID: String(PID) }, { log, send, pid: PID });
    notifier.ready('mounted', async () => problem);
    await vi.advanceTimersByTimeAsync(499);
    expect(sent.filter((message) => message === 'WATCHDOG=1')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent.filter((message) => message === 'WATCHDOG=1')).toHaveLength(3);
    problem = 'ENOTCONN';
    await vi.advanceTimersByTimeAsync(1_500);
    expect(sent.filter((message) => message === 'WATCHDOG=1')).toHaveLength(3);
    expect(logged).toContain('watchdog: the mount did not answer (ENOTCONN); WATCHDOG=1 withheld');
    problem = undefined;
    await vi.advanceTimersByTimeAsync(500);
    expect(sent.filter((message) => message === 'WATCHDOG=1')).toHaveLength(4);
    notifier.stopping();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent.at(-1)).toBe('STOPPING=1');
  });

  it('runs one probe at a time: a probe that hangs withholds the watchdog rather than piling up probes', async () => {
    const { sent, send, log } = sink();
    let release: (() => void) | undefined;
    const answers = vi.fn(() => new Promise<string | undefined>((resolve) => (release = () => resolve(undefined))));
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET, WATCHDOG_USEC: '1000000' }, { log, send, pid: PID });
    notifier.ready('mounted', answers);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(answers).toHaveBeenCalledTimes(1);
    expect(sent).not.toContain('WATCHDOG=1');
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.filter((message) => message === 'WATCHDOG=1')).toHaveLength(1);
    notifier.close();
  });

  it('a probe that answers after STOPPING=1 sends nothing after it', async () => {
    const { sent, send, log } = sink();
    let release: (() => void) | undefined;
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET, WATCHDOG_USEC: '1000000' }, { log, send, pid: PID });
    notifier.ready('mounted', () => new Promise((resolve) => (release = () => resolve(undefined))));
    await vi.advanceTimersByTimeAsync(500);
    notifier.stopping();
    release!();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(sent.at(-1)).toBe('STOPPING=1');
    expect(sent).not.toContain('WATCHDOG=1');
  });

  it.each([
    ['WATCHDOG_PID names another process', { WATCHDOG_USEC: '1000000', WATCHDOG_PID: String(PID + 1) }],
    ['WATCHDOG_USEC is not a number', { WATCHDOG_USEC: 'soon' }],
    ['WATCHDOG_USEC is 0', { WATCHDOG_USEC: '0' }],
    ['there is no WATCHDOG_USEC', {}],
  ])('has no watchdog when %s', async (_, watchdogEnv) => {
    const { sent, send, log } = sink();
    const answers = vi.fn(async () => undefined);
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET, ...watchdogEnv }, { log, send, pid: PID });
    notifier.ready('mounted', answers);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(answers).not.toHaveBeenCalled();
    expect(sent).toEqual(['READY=1\nSTATUS=mounted']);
  });

  it('says once that the manager cannot be told, when sending fails (errno) or cannot be done (no addon)', () => {
    const failing = sink(111);
    const notifier = serviceNotifier({ NOTIFY_SOCKET: SOCKET }, { log: failing.log, send: failing.send, pid: PID });
    notifier.status('a');
    notifier.status('b');
    expect(failing.send).toHaveBeenCalledTimes(2);
    expect(failing.logged).toEqual([`NOTIFY_SOCKET ${SOCKET}: cannot notify the service manager (errno 111); it is not told of this mount's state`]);

    const logged: string[] = [];
    const throwing = serviceNotifier({ NOTIFY_SOCKET: SOCKET }, {
      log: (line) => void logged.push(line),
      send: () => {
        throw new Error('the loaded libfuse 3 addon predates notifyService');
      },
      pid: PID,
    });
    throwing.status('a');
    throwing.stopping();
    expect(logged).toEqual([`NOTIFY_SOCKET ${SOCKET}: cannot notify the service manager: the loaded libfuse 3 addon predates notifyService`]);
  });
});
