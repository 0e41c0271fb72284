// Tells a service manager how the mount is doing, per sd_notify(3) (systemd's Type=notify):
// STATUS= lines while servers connect, READY=1 once the mount is live (when it prints "mounted"),
// STOPPING=1 on shutdown, and WATCHDOG=1 every half $WATCHDOG_USEC while a look through the mount
// answers. Nothing at all without $NOTIFY_SOCKET. The datagram itself is the addon's
// (native/notify_socket.c): Node has no AF_UNIX datagram socket.
import type { Log } from '../log.js';
import { loadAddon } from './lowlevel/addon.js';

/** The notification sink of one process; every call is a no-op when no manager listens. */
export interface ServiceNotifier {
  /** True when $NOTIFY_SOCKET named a socket. */
  readonly active: boolean;
  status(text: string): void;
  /** READY=1 with a last STATUS; starts the watchdog when the manager asked for one, fed while `answers` finds the mount answering (undefined) and withheld when not (why). */
  ready(status: string, answers: () => Promise<string | undefined>): void;
  stopping(): void;
  close(): void;
}

export interface ServiceNotifierOptions {
  log: Log;
  /** Sends one datagram: 0 or an errno value (default the addon's). */
  send?: (socketPath: string, message: string) => number;
  pid?: number;
}

/**
 * Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID from `env` and removes them, so the
 * servers this daemon starts never speak for it (NotifyAccess=main would refuse them anyway).
 */
export function serviceNotifier(env: NodeJS.ProcessEnv, options: ServiceNotifierOptions): ServiceNotifier {
  const socketPath = env['NOTIFY_SOCKET'];
  const watchdogUsec = Number(env['WATCHDOG_USEC']);
  const watchdogPid = env['WATCHDOG_PID'];
  delete env['NOTIFY_SOCKET'];
  delete env['WATCHDOG_USEC'];
  delete env['WATCHDOG_PID'];
  if (socketPath === undefined || socketPath === '') return INACTIVE;
  const { log } = options;
  const pid = options.pid ?? process.pid;
  // The watchdog is this process's only when WATCHDOG_PID, if set, names it.
  const watchdogMs = Number.isSafeInteger(watchdogUsec) && watchdogUsec > 0 && (watchdogPid === undefined || Number(watchdogPid) === pid) ? watchdogUsec / 1000 : undefined;
  let send = options.send;
  let failed = false;
  const notify = (message: string): void => {
    try {
      send ??= sendThroughAddon();
      const errno = send(socketPath, message);
      if (errno !== 0 && !failed) {
        failed = true;
        log(`NOTIFY_SOCKET ${socketPath}: cannot notify the service manager (errno ${errno}); it is not told of this mount's state`);
      }
    } catch (error) {
      if (!failed) log(`NOTIFY_SOCKET ${socketPath}: cannot notify the service manager: ${(error as Error).message}`);
      failed = true;
    }
  };
  let watchdog: NodeJS.Timeout | undefined;
  let checking = false;
  let stopped = false;
  return {
    active: true,
    status: (text) => notify(`STATUS=${oneLine(text)}`),
    ready(status, answers) {
      // A stop that came while mounting: the manager was told STOPPING=1, never READY=1 after it.
      if (stopped) return;
      notify(`READY=1\nSTATUS=${oneLine(status)}`);
      if (watchdogMs === undefined) return;
      // Half the interval, as sd_watchdog_enabled(3) advises; a probe still running skips a beat.
      watchdog = setInterval(() => {
        if (checking) return;
        checking = true;
        void answers()
          .then((problem) => {
            if (stopped) return;
            if (problem === undefined) notify('WATCHDOG=1');
            else log(`watchdog: the mount did not answer (${problem}); WATCHDOG=1 withheld`);
          })
          .finally(() => (checking = false));
      }, Math.max(50, Math.floor(watchdogMs / 2)));
      watchdog.unref();
    },
    stopping() {
      stopped = true;
      clearInterval(watchdog);
      notify('STOPPING=1');
    },
    close() {
      stopped = true;
      clearInterval(watchdog);
    },
  };
}

const INACTIVE: ServiceNotifier = { active: false, status: () => {}, ready: () => {}, stopping: () => {}, close: () => {} };

function sendThroughAddon(): (socketPath: string, message: string) => number {
  const addon = loadAddon();
  if (addon.notifyService === undefined) throw new Error('the loaded libfuse 3 addon predates notifyService: rebuild it (npm run build-native)');
  return (socketPath, message) => addon.notifyService!(socketPath, message);
}

/** A STATUS value is one line. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
