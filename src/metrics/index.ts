// The metrics layer's public surface, for the daemon's wiring (src/cli): the registry the
// layers' observers feed, the health of the mount, the HTTP endpoint serving both, and the
// warning when that endpoint listens beyond this host.
export { MountMetrics, type CacheName, type CacheUse, type MountMetricsOptions, type Watched, type WatchedCatalog } from './mount-metrics.js';
export { MountHealth, type HealthReport, type MountHealthOptions } from './mount-health.js';
export { childProbe, statProbe, type MountProbe, type ProbeOutcome } from './mount-probe.js';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';
export { exposureWarning, isLoopbackAddress, warnIfExposed, type ExposedFacts } from './metrics-exposure.js';
