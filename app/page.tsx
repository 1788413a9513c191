import { ConsoleApp } from '@/components/console/ConsoleApp';

/** The console: a thin page; everything lives in components/console. */
export default function ConsolePage() {
  return <ConsoleApp />;
}
