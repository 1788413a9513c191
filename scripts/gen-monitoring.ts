/**
 * Writes deploy/monitoring/'s generated files: the alerting rules (lib/monitoring/alertRules.ts) for
 * Prometheus and as a PrometheusRule, and the Grafana dashboard (lib/monitoring/grafanaDashboard.ts).
 * A test keeps them current.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitoringFiles } from '../lib/monitoring/monitoringFiles';

const dir = path.join(import.meta.dirname, '..', 'deploy', 'monitoring');
mkdirSync(dir, { recursive: true });
const files = monitoringFiles();
for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
console.log(`wrote ${Object.keys(files).join(', ')} to ${dir}`);
