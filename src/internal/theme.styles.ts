import { css, unsafeCSS } from 'lit';

// The theming API. Each element maps the public `--notif-*` custom properties (set by the page and
// inherited through shadow roots) onto private `--_*` ones with light or dark defaults, chosen by the
// `theme` attribute (`auto` follows `prefers-color-scheme`). Every default text colour meets 4.5:1 on
// the surfaces it sits on, in both palettes (test/components/a11y.test.ts computes it).

/** The palette's colours: each `--_name` defaults to `--notif-color-name`. */
export const NAMES = 'surface surface-raised surface-hover surface-unread text muted border accent accent-hover on-accent unread focus-ring danger skeleton badge on-badge'.split(' ');

/** A palette: its colours in the order of NAMES (hex digits; fewer leave the rest as they are), its shadow and colour scheme. */
const palette = (colours: string, shadow: string, scheme?: string) =>
  unsafeCSS(
    colours.split(' ').map((c, i) => `--_${NAMES[i]}:var(--notif-color-${NAMES[i]},#${c});`).join('') +
      `--_shadow:var(--notif-shadow,${shadow});color-scheme:${scheme}`,
  );

// The badge keeps its colours in the dark.
const dark = palette(
  '16181d 1c1f26 23272f 1b1e2e e8eaed a0a7b4 2c313a 8b8cf8 a5a6fa 0f1020 8b8cf8 a5a6fa ff8589 262a32',
  '0 0 0 1px #464d5b,0 16px 40px -4px rgb(0 0 0/.7)',
  'dark',
);

/**
 * The light palette, the defaults: colours in the order of NAMES, then the shadow. Exported for the
 * playground's theme controls (demo/states.ts), which cannot read these defaults from the CSS text.
 */
export const LIGHT = [
  'fff fff f4f5f7 f5f7ff 1b1f24 5d6470 e3e6eb 4f46e5 4338ca fff 4f46e5 4f46e5 c62a2f eceef2 dc2626 fff',
  '0 1px 2px rgb(16 24 40/.06),0 12px 32px -4px rgb(16 24 40/.18)',
] as const;

// The default face is the platform's own (system-ui: Segoe UI, San Francisco, Roboto, the desktop's
// on Linux); the names that used to spell it out one by one changed nothing in a current browser.
export const themeStyles = css`
  :host {
    ${palette(...LIGHT, 'light')};
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
    :host([theme='auto']) { ${dark} }
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
