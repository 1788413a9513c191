/** localStorage key of the colour theme. */
export const THEME_KEY = 'meshdeck-theme';

/** Runs before React: applies the stored theme so the page never flashes the other one. */
export const THEME_BOOT_SCRIPT = `try{var t=localStorage.getItem('${THEME_KEY}');if(t==='light'||t==='dark'){document.documentElement.dataset.theme=t;document.documentElement.style.colorScheme=t}}catch(e){}`;
