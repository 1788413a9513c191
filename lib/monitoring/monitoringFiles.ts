/**
 * The generated files of deploy/monitoring/ by name (`npm run gen:monitoring` writes them; a test checks
 * they are current). The ServiceMonitor and the Kustomization there are written by hand.
 */
import { prometheusRuleYaml, rulesFileYaml } from './alertRules';
import { dashboardJson } from './grafanaDashboard';

/** File name -> text. */
export function monitoringFiles(): Record<string, string> {
  return {
    'meshdeck.rules.yaml': rulesFileYaml(),
    'prometheus-rule.yaml': prometheusRuleYaml(),
    'meshdeck-dashboard.json': dashboardJson(),
  };
}
