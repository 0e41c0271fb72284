// What `skills-mount serve --metrics` adds to the mount's registry (upstream requests, verification
// failures and cache lookups are the mount's metrics, fed the same way): activations per server,
// the skills served, and /healthz: healthy once the view is served, with a note per server that
// is not connected.
import { Counter, Gauge } from 'prom-client';
import type { CatalogHealth } from '../catalog/server-catalog.js';
import type { HealthReport } from '../metrics/mount-health.js';
import type { MountMetrics } from '../metrics/mount-metrics.js';

export class ServeMetrics {
  private readonly activations: Counter<'server'>;
  private readonly labels: ReadonlySet<string>;
  private phase: 'starting' | 'serving' | 'stopping' = 'starting';

  constructor(
    readonly metrics: MountMetrics,
    labels: readonly string[],
    servedSkills: () => number,
    private readonly catalogs: () => ReadonlyArray<{ health(): Pick<CatalogHealth, 'label' | 'connection'> }>,
  ) {
    this.labels = new Set(labels);
    const registers = [metrics.registry];
    this.activations = new Counter({
      name: 'skills_mount_serve_activations_total',
      help: 'Skills activated through serve (a skills/get, or a read of its SKILL.md), by the upstream server label.',
      labelNames: ['server'] as const,
      registers,
    });
    new Gauge({
      name: 'skills_mount_serve_skills',
      help: 'Skills the gateway serves now (its skills/list).',
      registers,
      collect() {
        this.set(servedSkills());
      },
    });
  }

  /** One activation of a skill of `label`'s server. */
  activated(label: string): void {
    this.activations.inc({ server: this.labels.has(label) ? label : 'other' });
  }

  serving(): void {
    this.phase = 'serving';
  }

  stopping(): void {
    this.phase = 'stopping';
  }

  /** /healthz: ready once the view is served; a server not connected is a note, not a failure (its kept listing may serve). */
  health(): HealthReport {
    if (this.phase === 'starting') return { healthy: false, reason: 'starting: the servers are being listed' };
    if (this.phase === 'stopping') return { healthy: false, reason: 'stopping' };
    const notes = this.catalogs()
      .map((catalog) => catalog.health())
      .filter((health) => health.connection.status !== 'connected')
      .map((health) => `${health.label}: ${health.connection.status}`);
    return notes.length > 0 ? { healthy: true, notes } : { healthy: true };
  }
}
