// Subscriptions to one server's update notifications: each URI at most once, bounded in number;
// one that failed may be tried again. What an update means is decided elsewhere.
import type { SkillSource } from '../mcp/skill-source.js';
import type { ServerLog } from './server-log.js';

export class Subscriptions {
  private readonly subscribed = new Set<string>();
  private capLogged = false;

  constructor(
    private readonly source: SkillSource,
    private readonly log: ServerLog,
    private readonly maxSubscriptions: number,
  ) {}

  /** resources/subscribe to `uri`, unless the server does not take subscriptions, it is held already, or the bound is reached. */
  subscribe(uri: string): void {
    if (!this.source.features().subscribe || this.subscribed.has(uri)) return;
    if (this.subscribed.size >= this.maxSubscriptions) {
      // Said once: skills past the bound still change on a re-listing, only not at once.
      if (!this.capLogged) this.log.note(`${this.maxSubscriptions} subscriptions held, the most allowed; ${uri} and later skills learn of changes by re-listing`);
      this.capLogged = true;
      return;
    }
    this.subscribed.add(uri);
    this.source.subscribe(uri).catch((error: unknown) => {
      this.subscribed.delete(uri);
      this.log.note(`resources/subscribe ${uri} failed: ${(error as Error).message}`);
    });
  }
}
