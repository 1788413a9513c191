import '@xyflow/react/dist/style.css';
import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '@/components/console/Providers';
import { THEME_BOOT_SCRIPT } from '@/components/console/themeScript';
import './globals.css';

export const metadata: Metadata = {
  title: 'Meshdeck',
  description: 'Web console and GitOps control plane for a multiprotocol (l7mp / Envoy xDS) service mesh',
  icons: { icon: '/favicon.svg' },
};

export const viewport: Viewport = {
  colorScheme: 'dark light',
  themeColor: '#0f141b',
};

export default function RootLayout({ children }: Readonly<{ children: ReactNode }>) {
  return (
    <html lang="en" data-theme="dark" suppressHydrationWarning>
      <head>
        {/* Applies the stored theme before the first paint (no flash of the other theme). */}
        <script dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
