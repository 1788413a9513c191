import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: 'Meshdeck',
  description: 'Web console and GitOps control plane for a multiprotocol (l7mp / Envoy xDS) service mesh',
  icons: { icon: '/favicon.svg' },
};

export const viewport: Viewport = {
  colorScheme: 'dark',
  themeColor: '#0f141b',
};

export default function RootLayout({ children }: Readonly<{ children: ReactNode }>) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
