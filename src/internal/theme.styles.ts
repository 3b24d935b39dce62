import { css } from 'lit';

// The theming API. Each element maps the public `--notif-*` custom properties (set by the page and
// inherited through shadow roots) onto private `--_*` ones with light or dark defaults, chosen by the
// `theme` attribute (`auto` follows `prefers-color-scheme`). Every default text colour meets 4.5:1 on
// the surfaces it sits on, in both palettes (test/components/a11y.test.ts computes it).

/** The dark palette: what differs from the light one. */
const dark = css`
  --_surface: var(--notif-color-surface, #16181d);
  --_surface-raised: var(--notif-color-surface-raised, #1c1f26);
  --_surface-hover: var(--notif-color-surface-hover, #23272f);
  --_surface-unread: var(--notif-color-surface-unread, #1b1e2e);
  --_text: var(--notif-color-text, #e8eaed);
  --_muted: var(--notif-color-muted, #a0a7b4);
  --_border: var(--notif-color-border, #2c313a);
  --_accent: var(--notif-color-accent, #8b8cf8);
  --_accent-hover: var(--notif-color-accent-hover, #a5a6fa);
  --_on-accent: var(--notif-color-on-accent, #0f1020);
  --_unread: var(--notif-color-unread, #8b8cf8);
  --_focus: var(--notif-color-focus-ring, #a5a6fa);
  --_danger: var(--notif-color-danger, #ff8589);
  --_skeleton: var(--notif-color-skeleton, #262a32);
  --_shadow: var(--notif-shadow, 0 1px 2px rgb(0 0 0 / .3), 0 16px 40px -4px rgb(0 0 0 / .55));
  color-scheme: dark;
`;

export const themeStyles = css`
  :host {
    --_font-size-small: var(--notif-font-size-small, .75rem);
    --_radius: var(--notif-radius, .625rem);
    --_radius-small: var(--notif-radius-small, .375rem);
    --_space: var(--notif-spacing, .75rem);
    --_duration: var(--notif-duration, 160ms);
    --_badge: var(--notif-color-badge, #dc2626);
    --_on-badge: var(--notif-color-on-badge, #fff);
    --_surface: var(--notif-color-surface, #fff);
    --_surface-raised: var(--notif-color-surface-raised, #fff);
    --_surface-hover: var(--notif-color-surface-hover, #f4f5f7);
    --_surface-unread: var(--notif-color-surface-unread, #f5f7ff);
    --_text: var(--notif-color-text, #1b1f24);
    --_muted: var(--notif-color-muted, #5d6470);
    --_border: var(--notif-color-border, #e3e6eb);
    --_accent: var(--notif-color-accent, #4f46e5);
    --_accent-hover: var(--notif-color-accent-hover, #4338ca);
    --_on-accent: var(--notif-color-on-accent, #fff);
    --_unread: var(--notif-color-unread, #4f46e5);
    --_focus: var(--notif-color-focus-ring, #4f46e5);
    --_danger: var(--notif-color-danger, #c62a2f);
    --_skeleton: var(--notif-color-skeleton, #eceef2);
    --_shadow: var(--notif-shadow, 0 1px 2px rgb(16 24 40 / .06), 0 12px 32px -4px rgb(16 24 40 / .18));
    color-scheme: light;
    font: var(--notif-font-size, .875rem) / 1.45 var(--notif-font-family, ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif);
    color: var(--_text);
  }
  :host([theme='dark']) { ${dark} }
  @media (prefers-color-scheme: dark) {
    :host([theme='auto']) { ${dark} }
  }
  @media (prefers-reduced-motion: reduce) {
    :host { --_duration: 0s; }
    * { animation: none !important; }
  }
  :host([hidden]) { display: none !important; }
  * { box-sizing: border-box; }
  .icon {
    flex: none; inline-size: 1.25em; block-size: 1.25em;
    fill: none; stroke: currentColor; stroke-width: 1.75; stroke-linecap: round; stroke-linejoin: round;
  }
  .sr-only { position: absolute; inline-size: 1px; block-size: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  button { font: inherit; color: inherit; cursor: pointer; }
  :focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
  .ghost {
    display: inline-flex; align-items: center; gap: .375rem; padding: .3125rem .5rem; border: 0;
    border-radius: var(--_radius-small); background: none; color: var(--_muted);
    font-size: var(--_font-size-small); font-weight: 500;
  }
  .ghost:hover { background: var(--_surface-hover); color: var(--_text); }
  .ghost:disabled { opacity: .5; cursor: default; background: none; }
`;
