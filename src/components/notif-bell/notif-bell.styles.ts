import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host { display: inline-block; position: relative; vertical-align: middle; }
    .button {
      anchor-name: --notif-bell; display: grid; place-items: center;
      inline-size: 2.5rem; block-size: 2.5rem; border-radius: 50%;
      background: var(--notif-bell-background, none); color: var(--notif-bell-color, currentColor);
    }
    .button:hover, [aria-expanded='true'] { background: var(--_surface-hover); color: var(--_text); }
    /* The bell's icon; the other slots forward the app's content (and custom rows) to the feed as it is. */
    .button .icon, [name=icon]::slotted(*) { inline-size: 1.375rem; block-size: 1.375rem; }
    .view .icon { inline-size: 1.25rem; }
    .view { padding: .25rem; }
    :dir(rtl) .back { scale: -1 1; }
    .badge {
      position: absolute; inset-block-start: .25rem; inset-inline-start: calc(50% + 1px);
      min-inline-size: 1rem; padding-inline: .25rem; box-sizing: content-box;
      border: 2px solid var(--notif-badge-border, var(--_surface)); border-radius: 1rem;
      background: var(--_badge); color: var(--_on-badge);
      font-size: .625rem; font-weight: 700; line-height: 1rem; font-variant-numeric: tabular-nums;
      pointer-events: none;
    }
    [popover] {
      inset: 4rem auto auto; inset-inline-end: .5rem; margin: 0; padding: 0; overflow: hidden;
      inline-size: min(var(--notif-popover-width, 25rem), 100vw - 1rem); max-block-size: min(var(--notif-popover-height, 34rem), 100dvh - 5rem);
      border: 1px solid var(--_border); border-radius: var(--_radius);
      background: var(--_surface); color: var(--_text); box-shadow: var(--_shadow);
      transition: opacity var(--_duration), translate var(--_duration);
    }
    /* It fits its content up to its largest height (the feed's list scrolls), and enters briefly. */
    :popover-open { display: flex; flex-flow: column; }
    @starting-style { :popover-open { opacity: 0; translate: 0 -.5rem; } }
    @supports (position-anchor: --a) {
      [popover] {
        position-anchor: --notif-bell; inset: auto; margin-block-start: .5rem;
        position-area: self-block-end span-self-inline-start;
        position-try-fallbacks: flip-inline, flip-block, flip-block flip-inline;
      }
      /* Narrow screens: under the bell, the viewport's width less a margin each side. */
      @media (max-width: 30rem) {
        [popover] { position-area: none; inset: anchor(bottom) .5rem auto; inline-size: auto; }
      }
    }
  `,
];
