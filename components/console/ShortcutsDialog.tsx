'use client';

import { Dialog } from './Dialog';

export const SHORTCUTS: [string, string][] = [
  ['Ctrl+Z', 'Undo (graph, form and YAML edits alike)'],
  ['Ctrl+Shift+Z or Ctrl+Y', 'Redo'],
  ['Ctrl+S', 'Save the draft now (it also saves by itself)'],
  ['Delete / Backspace', 'Delete the selected object (on the canvas)'],
  ['Ctrl+D', 'Duplicate the selected object (a new name, a free port)'],
  ['Shift while connecting', 'Append the Target to the ingress chain'],
  ['Alt while connecting', 'Append the Target to the egress chain'],
  ['/ or Ctrl+K', 'Find an object on the canvas (kind:, ns:, is:error narrow it)'],
  ['Ctrl+. (in YAML)', 'Quick fixes for the problem on this line (also: Fix in the list)'],
  ['1 / 2 / 3', 'Inspector / YAML / Preview tab'],
  ['H', 'Apply history: what each apply changed, and a way back'],
  ['T', 'Live traffic on the graph, on or off'],
  ['Esc', 'Clear the selection, close a dialog'],
  ['?', 'This cheat sheet'],
];

/** The keyboard shortcuts cheat sheet (`?`). */
export function ShortcutsDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  return (
    <Dialog open={open} title="Keyboard shortcuts" onClose={onClose} testId="shortcuts">
      <dl className="shortcuts">
        {SHORTCUTS.map(([k, v]) => (
          <div key={k} className="shortcuts__row">
            <dt>
              <kbd>{k}</kbd>
            </dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}
