import { ConsoleApp } from '@/components/console/ConsoleApp';
import { EARLY_DRAFT_SCRIPT } from '@/components/console/earlyDraft';
import { EARLY_PICTURE_SCRIPT } from '@/components/console/earlyPicture';

/** The console: a thin page; everything lives in components/console. */
export default function ConsolePage() {
  return (
    <>
      {/* Asks for the draft while the app's scripts load (earlyDraft.ts). */}
      <script dangerouslySetInnerHTML={{ __html: EARLY_DRAFT_SCRIPT }} />
      {/* Draws a large draft's first view from the server's layout before the app has loaded (earlyPicture.ts). */}
      <script dangerouslySetInnerHTML={{ __html: EARLY_PICTURE_SCRIPT }} />
      <ConsoleApp />
    </>
  );
}
