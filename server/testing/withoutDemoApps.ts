/**
 * A manifest's text without the local mesh's demo apps (the `meshdeck.l7mp.io/app*` annotations):
 * for tests that bring their own clients and backends on a copy of an example whose apps would take
 * its addresses, or open ADS streams of their own.
 */
export function withoutDemoApps(text: string): string {
  return text
    .replace(/^ *annotations: \{ *meshdeck\.l7mp\.io\/app:[^}]*\}\n/gm, '')
    .replace(/^( *)annotations:\n(?:\1 +meshdeck\.l7mp\.io\/app[^\n]*\n)+/gm, '');
}
