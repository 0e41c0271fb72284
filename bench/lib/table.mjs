// The benchmark's rows (one per figure of the issues' tables) and their rendering as Markdown
// tables, for the terminal and for docs/benchmarks.md: rows measured on each FUSE backend side
// by side, then rows measured once.

/**
 * One row measured once: `measured` and `baseline` in `unit`, `ratio` measured/baseline (or as
 * the target defines it), `met` true/false when the target is a checkable bound, null for "report".
 */
export function row({ id, workload, unit, measured, baseline = null, ratio = null, target = 'report', met = null, measuredText, baselineText, detail, samples }) {
  return {
    id,
    workload,
    unit,
    measured,
    baseline,
    ratio,
    target,
    met,
    measuredText: measuredText ?? formatValue(measured, unit),
    baselineText: baselineText ?? (baseline === null ? '—' : formatValue(baseline, unit)),
    ...(detail !== undefined && { detail }),
    ...(samples !== undefined && { samples }),
  };
}

/** A ratio row measured once: mount figure over baseline figure, met when ratio <= maxRatio. */
export function ratioRow({ maxRatio, ...fields }) {
  const ratio = fields.measured / fields.baseline;
  return row({ ...fields, ratio, target: `≤ ${maxRatio}`, met: ratio <= maxRatio });
}

/**
 * A row measured on each FUSE backend. `cells` maps each backend, in the table's order, to
 * {measured, measuredText?, ratio?, baseline?, detail?, samples?}; a cell's ratio is its measured
 * over its own baseline or the row's. `bound` ({target, judge(cell)}, e.g. atMostRatio(1.2))
 * judges every cell; the row's `met` is the first backend's, the one the targets are for.
 */
export function backendRow({ id, workload, unit, baseline = null, baselineText, bound = REPORT, cells, detail, samples }) {
  const backends = {};
  for (const [backend, cell] of Object.entries(cells)) {
    const base = cell.baseline ?? baseline;
    const ratio = cell.ratio ?? (base === null ? null : cell.measured / base);
    const judged = { ...cell, ratio, measuredText: cell.measuredText ?? formatValue(cell.measured, unit) };
    backends[backend] = { ...judged, met: bound.judge(judged) };
  }
  const judgedBy = Object.keys(backends)[0];
  return {
    id,
    workload,
    unit,
    baseline,
    baselineText: baselineText ?? (baseline === null ? '—' : formatValue(baseline, unit)),
    target: bound.target,
    judgedBy,
    met: backends[judgedBy].met,
    backends,
    ...(detail !== undefined && { detail }),
    ...(samples !== undefined && { samples }),
  };
}

const REPORT = { target: 'report', judge: () => null };

/** Met when the cell's ratio is at most `max`. */
export function atMostRatio(max) {
  return { target: `≤ ${max}`, judge: (cell) => cell.ratio <= max };
}

/** Met when the cell's measured value is exactly `expected` (request counts). */
export function exactly(expected) {
  return { target: String(expected), judge: (cell) => cell.measured === expected };
}

/** Met when the cell's measured value is at most `max`, described as `target`. */
export function atMost(max, target) {
  return { target, judge: (cell) => cell.measured <= max };
}

export function formatValue(value, unit) {
  if (value === null || value === undefined) return '—';
  if (!Number.isFinite(value)) return String(value);
  switch (unit) {
    case 'ms':
      return value >= 100 ? `${value.toFixed(0)} ms` : value >= 1 ? `${value.toFixed(2)} ms` : `${(value * 1000).toFixed(1)} µs`;
    case 'µs':
      return value >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(1)} µs`;
    case 'MB/s':
      return `${value.toFixed(0)} MB/s`;
    case 'KiB':
      return value >= 10240 ? `${(value / 1024).toFixed(1)} MiB` : `${value.toFixed(0)} KiB`;
    case 'B/file':
      return `${value.toFixed(0)} B/file`;
    default:
      return `${Number.isInteger(value) ? value : value.toFixed(2)}${unit ? ` ${unit}` : ''}`;
  }
}

/**
 * The rows as Markdown: the per-backend rows (workload, each backend's figure and ratio,
 * baseline, target, met? of the first backend), then the rows measured once (workload,
 * measured, baseline, ratio, target, met?). A table with no rows is left out.
 */
export function renderTable(rows) {
  const perBackend = rows.filter((r) => r.backends !== undefined);
  const once = rows.filter((r) => r.backends === undefined);
  const tables = [];
  if (perBackend.length > 0) {
    const backends = Object.keys(perBackend[0].backends);
    const lines = [
      `| workload | ${backends.map((backend) => `${backend} | ratio`).join(' | ')} | baseline | target | met? (${backends[0]}) |`,
      `| --- | ${backends.map(() => '---: | ---:').join(' | ')} | ---: | --- | --- |`,
    ];
    for (const r of perBackend) {
      const cells = backends.map((backend) => `${r.backends[backend].measuredText} | ${ratioText(r.backends[backend].ratio)}`);
      lines.push(`| ${r.workload} | ${cells.join(' | ')} | ${r.baselineText} | ${r.target} | ${metText(r.met)} |`);
    }
    tables.push(lines.join('\n'));
  }
  if (once.length > 0) {
    const lines = ['| workload | measured | baseline | ratio | target | met? |', '| --- | ---: | ---: | ---: | --- | --- |'];
    for (const r of once) lines.push(`| ${r.workload} | ${r.measuredText} | ${r.baselineText} | ${ratioText(r.ratio)} | ${r.target} | ${metText(r.met)} |`);
    tables.push(lines.join('\n'));
  }
  return tables.join('\n\n');
}

function ratioText(ratio) {
  return ratio === null ? '—' : ratio.toFixed(2);
}

function metText(met) {
  return met === null ? 'report' : met ? 'yes' : '**no**';
}
