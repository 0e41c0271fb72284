// The benchmark's rows (one per figure in issue 5's table) and their rendering as a
// Markdown table, for the terminal and for docs/benchmarks.md.

/**
 * One row: `measured` and `baseline` in `unit`, `ratio` measured/baseline (or as the
 * target defines it), `met` true/false when the target is a checkable bound, null for "report".
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

/** A ratio row: mount figure over baseline figure, met when ratio <= maxRatio. */
export function ratioRow({ maxRatio, ...fields }) {
  const ratio = fields.measured / fields.baseline;
  return row({ ...fields, ratio, target: `≤ ${maxRatio}`, met: ratio <= maxRatio });
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

/** The rows as a Markdown table: workload, measured, baseline, ratio, target, met?. */
export function renderTable(rows) {
  const lines = ['| workload | measured | baseline | ratio | target | met? |', '| --- | ---: | ---: | ---: | --- | --- |'];
  for (const r of rows) {
    const ratio = r.ratio === null ? '—' : r.ratio.toFixed(2);
    const met = r.met === null ? 'report' : r.met ? 'yes' : '**no**';
    lines.push(`| ${r.workload} | ${r.measuredText} | ${r.baselineText} | ${ratio} | ${r.target} | ${met} |`);
  }
  return lines.join('\n');
}
