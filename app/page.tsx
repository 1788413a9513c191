import { ConsoleApp } from '@/components/console/ConsoleApp';
import { EARLY_DRAFT_SCRIPT } from '@/components/console/earlyDraft';

/** The console: a thin page; everything lives in components/console. */
export default function ConsolePage() {
  return (
    <>
      {/* Asks for the draft while the app's scripts load (earlyDraft.ts). */}
      <script dangerouslySetInnerHTML={{ __html: EARLY_DRAFT_SCRIPT }} />
      <ConsoleApp />
    </>
  );
}
