import type { Metadata } from 'next';
import { ProxiesPage } from '@/components/console/ProxiesPage';

export const metadata: Metadata = { title: 'Proxies · Meshdeck' };

/** Every proxy's sync state, like `istioctl proxy-status`, updating live. */
export default function Page() {
  return <ProxiesPage />;
}
