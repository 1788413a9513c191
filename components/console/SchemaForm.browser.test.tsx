import '@/app/globals.css';
import { describe, expect, it } from 'vitest';
import { userEvent } from 'vitest/browser';
import { render } from 'vitest-browser-react';
import { parse } from 'yaml';
import type { FieldPath } from '@/lib/console/fieldPath';
import type { QuickFix } from '@/lib/console/quickFixes';
import { diagnosticsByField, type JsonSchema } from '@/lib/console/schemaForm';
import { compileMesh } from '@/lib/engine/compileMesh';
import { meshJsonSchema } from '@/lib/model/jsonSchemas';
import { parseManifests } from '@/lib/parse/parseManifests';
import { SchemaForm } from './SchemaForm';

// A gateway whose only rule routes to a name that is neither a Target, a VirtualService nor a Service.
const YAML = `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: gw, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: 9001 }
  rules:
    - action:
        route:
          destination: nope-target
`;

const schema = meshJsonSchema('VirtualService') as JsonSchema;

function field(container: HTMLElement, path: string): HTMLElement {
  const el = container.querySelector<HTMLElement>(`[data-field-path="${CSS.escape(path)}"]`);
  if (!el) throw new Error(`no field ${path}`);
  return el;
}

describe('SchemaForm (the Inspector form of a VirtualService)', () => {
  it("shows the engine's error inline on the field it is about, marked invalid", async () => {
    const value = parse(YAML) as Record<string, unknown>;
    // The engine's own diagnostics for this draft, not hand-written ones.
    const diagnostics = compileMesh(parseManifests([{ path: 'mesh.yaml', content: YAML }])).diagnostics;
    const unresolved = diagnostics.find((d) => d.code === 'unresolved-reference');
    expect(unresolved?.path).toBe('spec.rules[0].action.route.destination');
    const screen = await render(
      <SchemaForm
        schema={schema}
        value={value}
        diagnostics={diagnosticsByField(value, diagnostics)}
        onChange={() => undefined}
        onRename={() => undefined}
      />,
    );
    const message = '"nope-target" is neither a VirtualService nor a Kubernetes Service in namespace default';
    await expect.element(screen.getByText(message)).toBeVisible();
    const dest = field(screen.container, 'spec.rules[0].action.route.destination');
    expect(dest.textContent).toContain(message);
    expect(dest.classList.contains('field--invalid')).toBe(true);
    // Fields without a diagnostic stay clean.
    expect(field(screen.container, 'spec.udp.port').classList.contains('field--invalid')).toBe(false);
    expect(field(screen.container, 'spec.udp.port').querySelector('.field-error')).toBeNull();
  });

  it("offers a diagnostic's quick fixes beside it, and runs the one clicked", async () => {
    const value = parse(YAML) as Record<string, unknown>;
    const diagnostics = compileMesh(parseManifests([{ path: 'mesh.yaml', content: YAML }])).diagnostics;
    const fix: QuickFix = {
      title: 'Create Target "nope-target"',
      command: { type: 'addObject', object: { kind: 'Target' } },
    };
    const asked: string[] = [];
    const applied: QuickFix[] = [];
    const screen = await render(
      <SchemaForm
        schema={schema}
        value={value}
        diagnostics={diagnosticsByField(value, diagnostics)}
        onChange={() => undefined}
        onRename={() => undefined}
        fixesFor={(d) => (asked.push(`${d.code} ${d.path}`), d.code === 'unresolved-reference' ? [fix] : [])}
        onFix={(f) => applied.push(f)}
      />,
    );
    const dest = field(screen.container, 'spec.rules[0].action.route.destination');
    await expect.element(screen.getByRole('button', { name: fix.title })).toBeVisible();
    expect(dest.querySelectorAll('[data-testid="field-quick-fix"]')).toHaveLength(1);
    // Asked only for codes that may have a fix (not for the dropped rule, route or listener).
    expect([...new Set(asked)].sort()).toEqual([
      'selector-no-service spec.selector.serviceName',
      'unresolved-reference spec.rules[0].action.route.destination',
    ]);
    await userEvent.click(screen.getByRole('button', { name: fix.title }));
    expect(applied).toEqual([fix]);
  });

  it('refuses a port above 65535 inline and does not apply it; a valid port is applied', async () => {
    const value = parse(YAML) as Record<string, unknown>;
    const changes: { path: FieldPath; value: unknown }[] = [];
    const screen = await render(
      <SchemaForm
        schema={schema}
        value={value}
        diagnostics={new Map()}
        onChange={(path, v) => changes.push({ path, value: v })}
        onRename={() => undefined}
      />,
    );
    const port = field(screen.container, 'spec.udp.port');
    const input = port.querySelector('input')!;
    expect(input.value).toBe('9001');
    await userEvent.fill(input, '99999');
    await expect
      .element(screen.getByRole('alert'))
      .toHaveTextContent('99999 is above the maximum 65535 (not applied)');
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(changes.some((c) => c.value === 99999)).toBe(false);
    await userEvent.fill(input, '9002');
    await expect.poll(() => changes.at(-1)).toEqual({ path: ['spec', 'udp', 'port'], value: 9002 });
    expect(screen.getByRole('alert').query()).toBeNull();
  });
});
