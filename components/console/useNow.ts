'use client';

import { useEffect, useState } from 'react';

/** Milliseconds since the epoch, again every second while `ticking` (ages and countdowns on screen). */
export function useNow(ticking = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}
