// Each activation of a served skill, recorded: a `skills/get` of it, or a read of its SKILL.md.
// One log line, a metrics count, and with --audit one JSON line appended to the audit file
// (opened once, never through a symbolic link, 0600). Who asked: the token's subject when the
// client signed in, else its session, else the transport.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import { errorMessage } from '../private-files.js';
import type { ServedRequest } from '../server/skills-server.js';
import { parseSkillUri } from '../server/skill-uri.js';
import type { GatewayTree } from './gateway-tree.js';

/** One activation, as the audit file has it. */
export interface Activation {
  time: string;
  /** `sub:SUBJECT`, `session:ID`, or the transport (`stdio`, `http`). */
  client: string;
  method: ServedRequest['method'];
  label: string;
  skill: string;
  /** The URI served here, and upstream. */
  uri: string;
  upstreamUri: string;
  /** The SKILL.md digest served ("dynamic" for a skill without digests). */
  digest: string;
}

export interface ActivationSinks {
  log: Log;
  /** Counts one activation (the metrics). */
  count?: (activation: Activation) => void;
  audit?: AuditFile;
}

/** Turns the service's answered requests into activations of `tree`'s skills. */
export function activationRecorder(tree: GatewayTree, transport: 'stdio' | 'http', sinks: ActivationSinks): (served: ServedRequest) => void {
  return (served) => {
    const parsed = parseSkillUri(served.uri);
    const skill = parsed.ok ? tree.snapshot.skillsByUri.get(parsed.canonical) : undefined;
    // A read of any other file is no activation: the skill was activated when its SKILL.md was read.
    if (skill === undefined) return;
    const origin = tree.originOf(skill);
    if (origin === undefined) return;
    const subject = served.ctx.http?.authInfo?.extra?.['sub'];
    const client = typeof subject === 'string' ? `sub:${subject}` : served.ctx.sessionId !== undefined ? `session:${served.ctx.sessionId}` : transport;
    const activation: Activation = {
      time: new Date().toISOString(),
      client,
      method: served.method,
      label: origin.label,
      skill: String(skill.frontmatter['name']),
      uri: skill.uri,
      upstreamUri: origin.uri,
      digest: skill.skillMdDigest,
    };
    sinks.log(`activation: ${escapeForLog(activation.client)} ${activation.method} [${activation.label}] ${escapeForLog(activation.skill)} ${activation.digest}`);
    sinks.count?.(activation);
    sinks.audit?.append(activation);
  };
}

/** The --audit file: JSON lines appended in order; a failed write is logged, never fatal to serving. */
export class AuditFile {
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    private readonly handle: FileHandle,
    readonly file: string,
    private readonly log: Log,
  ) {}

  /** Opens (creating, 0600) `file` for appending; a symbolic link or anything but a regular file is refused. */
  static async open(file: string, log: Log): Promise<AuditFile> {
    let handle: FileHandle;
    try {
      handle = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'is a symbolic link' : errorMessage(error);
      throw new ConfigError(`--audit ${file}: cannot be opened for appending: ${why}`);
    }
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      throw new ConfigError(`--audit ${file}: is not a regular file`);
    }
    return new AuditFile(handle, file, log);
  }

  append(activation: Activation): void {
    const line = `${JSON.stringify(activation)}\n`;
    this.queue = this.queue.then(async () => {
      try {
        await this.handle.write(line);
      } catch (error) {
        this.log(`--audit ${this.file}: a line could not be written: ${errorMessage(error)}`);
      }
    });
  }

  /** Waits for the lines written so far, then closes. */
  async close(): Promise<void> {
    await this.queue;
    await this.handle.close();
  }
}
