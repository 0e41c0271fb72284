// The addon seen through an OperationObserver: every request the edge starts is timed until
// its one reply, whichever reply function sends it. A reply the addon refuses (the request was
// already answered by an interrupt or the unmount) ends the request as EINTR.
import { constants as osConstants } from 'node:os';
import type { OperationObserver } from '../operation-observer.js';
import { ATTR, type Addon, type Session } from './addon.js';

const { EINTR, ENOENT } = osConstants.errno;

export interface ObservedAddon {
  readonly addon: Addon;
  /** A request with a reply due has reached the edge. */
  started(id: number, op: string): void;
}

export function observeAddon(addon: Addon, observer: OperationObserver): ObservedAddon {
  const inFlight = new Map<number, { op: string; startedAt: number }>();
  const end = (id: number, errno: number, answered: boolean): void => {
    const request = inFlight.get(id);
    if (request === undefined) return;
    inFlight.delete(id);
    observer.finished(request.op, answered ? errno : EINTR, (performance.now() - request.startedAt) / 1000);
  };
  const replying =
    <Args extends unknown[]>(reply: (session: Session, id: number, ...args: Args) => boolean) =>
    (session: Session, id: number, ...args: Args): boolean => {
      const answered = reply.call(addon, session, id, ...args);
      end(id, 0, answered);
      return answered;
    };
  const observed: Addon = Object.assign(Object.create(addon) as Addon, {
    replyErr(session: Session, id: number, errno: number): boolean {
      const answered = addon.replyErr(session, id, errno);
      end(id, errno, answered);
      return answered;
    },
    // A miss is a negative entry (inode 0, so the kernel caches it): ENOENT to the caller.
    replyEntry(session: Session, id: number, attrs: Float64Array, entryTimeoutSeconds: number, attrTimeoutSeconds: number): boolean {
      const answered = addon.replyEntry(session, id, attrs, entryTimeoutSeconds, attrTimeoutSeconds);
      end(id, attrs[ATTR.ino] === 0 ? ENOENT : 0, answered);
      return answered;
    },
    replyAttr: replying(addon.replyAttr),
    replyOpen: replying(addon.replyOpen),
    replyOpenCounted(session: Session, id: number, ino: number, fh: number, flags: number, answerLater: boolean, bytes?: Uint8Array, storeBytes?: number): number {
      const made = addon.replyOpenCounted(session, id, ino, fh, flags, answerLater, bytes, storeBytes);
      end(id, 0, made >= 0);
      return made;
    },
    replyBuf: replying(addon.replyBuf),
    replyXattrSize: replying(addon.replyXattrSize),
    replyStatfs: replying(addon.replyStatfs),
    replyDirectory(session: Session, id: number, plus: boolean, maxBytes: number, firstOffset: number, names: string[], attrs: Float64Array): number {
      const added = addon.replyDirectory(session, id, plus, maxBytes, firstOffset, names, attrs);
      end(id, 0, added >= 0);
      return added;
    },
  });
  return {
    addon: observed,
    started(id, op) {
      inFlight.set(id, { op, startedAt: performance.now() });
      observer.started(op);
    },
  };
}
