import { css, unsafeCSS } from 'lit';

// The theming API. Each element maps the public `--notif-*` custom properties (set by the page and
// inherited through shadow roots) onto private `--_*` ones with light or dark defaults, chosen by the
// `theme` attribute: `auto` (or none) follows `prefers-color-scheme`, `light` and `dark` hold. Every default text colour meets 4.5:1 on
// the surfaces it sits on, in both palettes (test/components/a11y.test.ts computes it).

/** The palette's colours: each `--_name` defaults to `--notif-color-name`. */
export type ColourName =
  | 'surface' | 'surface-raised' | 'surface-hover' | 'surface-unread' | 'text' | 'muted' | 'border'
  | 'accent' | 'accent-hover' | 'on-accent' | 'unread' | 'focus-ring' | 'danger' | 'skeleton' | 'badge' | 'on-badge';

/** A palette: its colours by name, its shadow and its colour scheme. */
export interface Palette {
  colours: Partial<Record<ColourName, string>>;
  shadow: string;
  scheme: 'light' | 'dark';
}

/**
 * The light palette, the defaults. Exported for the playground's theme controls (demo/states.ts),
 * which cannot read these defaults from the CSS text.
 */
export const LIGHT_PALETTE: Palette & { colours: Record<ColourName, string> } = {
  colours: {
    surface: '#fff',
    'surface-raised': '#fff',
    'surface-hover': '#f4f5f7',
    'surface-unread': '#f5f7ff',
    text: '#1b1f24',
    muted: '#5d6470',
    border: '#e3e6eb',
    accent: '#4f46e5',
    'accent-hover': '#4338ca',
    'on-accent': '#fff',
    unread: '#4f46e5',
    'focus-ring': '#4f46e5',
    danger: '#c62a2f',
    skeleton: '#eceef2',
    badge: '#dc2626',
    'on-badge': '#fff',
  },
  shadow: '0 1px 2px rgb(16 24 40/.06),0 12px 32px -4px rgb(16 24 40/.18)',
  scheme: 'light',
};

/** The dark palette: the colours it leaves out (the badge's) stay as the light palette has them. */
const DARK_PALETTE: Palette = {
  colours: {
    surface: '#16181d',
    'surface-raised': '#1c1f26',
    'surface-hover': '#23272f',
    'surface-unread': '#1b1e2e',
    text: '#e8eaed',
    muted: '#a0a7b4',
    border: '#2c313a',
    accent: '#8b8cf8',
    'accent-hover': '#a5a6fa',
    'on-accent': '#0f1020',
    unread: '#8b8cf8',
    'focus-ring': '#a5a6fa',
    danger: '#ff8589',
    skeleton: '#262a32',
  },
  shadow: '0 0 0 1px #464d5b,0 16px 40px -4px rgb(0 0 0/.7)',
  scheme: 'dark',
};

/** A palette's declarations: each colour's private property, its shadow and colour scheme. */
function paletteCss({ colours, shadow, scheme }: Palette) {
  let declarations = '';
  for (const [name, colour] of Object.entries(colours)) declarations += `--_${name}:var(--notif-color-${name},${colour});`;
  declarations += `--_shadow:var(--notif-shadow,${shadow});color-scheme:${scheme}`;
  return unsafeCSS(declarations);
}

const light = paletteCss(LIGHT_PALETTE);
const dark = paletteCss(DARK_PALETTE);

// The default face is the platform's own (system-ui: Segoe UI, San Francisco, Roboto, the desktop's
// on Linux); the names that used to spell it out one by one changed nothing in a current browser.
export const themeStyles = css`
  :host {
    ${light};
    --_font-size-small: var(--notif-font-size-small, .75rem);
    --_radius: var(--notif-radius, .625rem);
    --_radius-small: var(--notif-radius-small, .375rem);
    --_space: var(--notif-spacing, .75rem);
    --_duration: var(--notif-duration, .15s);
    font: var(--notif-font-size, .875rem)/1.45 var(--notif-font-family, system-ui, sans-serif);
    color: var(--_text);
  }
  :host([theme='dark']) { ${dark} }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme='light'])) { ${dark} }
  }
  @media (prefers-reduced-motion: reduce) {
    * { animation: none!important; transition: none!important; }
  }
  :host([hidden]) { display: none!important; }
  * { box-sizing: border-box; }
  .icon {
    flex: none; inline-size: 1.25em;
    fill: none; stroke: currentColor; stroke-width: 1.75; stroke-linecap: round; stroke-linejoin: round;
  }
  .sr-only { position: absolute; inline-size: 1px; block-size: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  /* Each kind of button adds its own padding, border and background. */
  button { padding: 0; border: 0; background: none; font: inherit; color: inherit; cursor: pointer; }
  :focus-visible { outline: 2px solid var(--_focus-ring); outline-offset: 2px; }
  .ghost {
    display: inline-flex; align-items: center; gap: .375rem; padding: .3125rem .5rem;
    border-radius: var(--_radius-small); color: var(--_muted);
    font-size: var(--_font-size-small); font-weight: 500;
  }
  .ghost:enabled:hover { background: var(--_surface-hover); color: var(--_text); }
  .ghost:disabled { opacity: .5; cursor: default; }
  /* Loading placeholders (the feed's and the preferences'). */
  .bone { block-size: .625rem; border-radius: var(--_radius-small); background: var(--_skeleton); animation: pulse 1.4s infinite; }
  @keyframes pulse { 50% { opacity: .45; } }
  /* Outlined buttons: retry, and the messages' CTA buttons. */
  .outline { border: 1px solid var(--_border); border-radius: var(--_radius-small); background: var(--_surface-raised); }
  .outline:hover { background: var(--_surface-hover); }
`;
