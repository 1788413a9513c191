'use client';

import { PALETTE_KINDS, type PaletteKind } from '@/lib/console/palette';

const HELP: Record<PaletteKind, string> = {
  VirtualService: 'A listener on the proxies its selector picks, with rules that route traffic.',
  Route: 'Where a rule sends traffic: a destination Target and ingress/egress chains.',
  Target: 'A cluster: the endpoints of a VirtualService or Service, explicit endpoints, or a canary split.',
  Service: 'A Kubernetes Service: its pods are endpoints.',
};

/** Add an object with sensible defaults; connect nodes on the canvas to make references. */
export function Palette({ onAdd }: { onAdd(kind: PaletteKind): void }) {
  return (
    <nav className="palette" aria-label="Add objects" data-testid="palette">
      <h2 className="panel-title">Add</h2>
      {PALETTE_KINDS.map((k) => (
        <button
          key={k}
          type="button"
          className={`palette__item palette__item--${k.toLowerCase()}`}
          onClick={() => onAdd(k)}
          title={HELP[k]}
          data-testid={`add-${k}`}
        >
          + {k}
        </button>
      ))}
      <div className="palette__help">
        <p>Drag from a node&apos;s right handle to another node to connect:</p>
        <ul>
          <li>Route → Target: destination</li>
          <li>
            with <kbd>Shift</kbd>: ingress, <kbd>Alt</kbd>: egress
          </li>
          <li>VirtualService → Route: a rule</li>
          <li>Target → VirtualService: endpoints</li>
        </ul>
      </div>
    </nav>
  );
}
