// Preloaded by bench/ingest.ts into the measured process: at exit, its peak RSS to OPFLOW_RSS_REPORT.
process.on('exit', () => {
  const file = process.env.OPFLOW_RSS_REPORT;
  if (file)
    require('node:fs').writeFileSync(
      file,
      JSON.stringify({ peakRssMb: process.resourceUsage().maxRSS / 1024 }),
    );
});
