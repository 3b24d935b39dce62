import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host { display: block; min-inline-size: 0; }
    .base {
      position: relative; display: grid; grid: none/auto minmax(0, 1fr) auto; gap: var(--_space);
      padding: var(--_space); padding-inline-start: calc(var(--_space) + .25rem);
      background: var(--_surface); transition: background-color var(--_duration);
    }
    .unread { background: var(--_surface-unread); }
    .base:hover { background: var(--_surface-hover); }
    .dot {
      position: absolute; inset-inline-start: .375rem; inset-block-start: calc(var(--_space) + .9rem);
      inline-size: .4375rem; block-size: .4375rem; border-radius: 50%; background: var(--_unread);
    }
    .avatar {
      display: grid; place-items: center; inline-size: 2.25rem; block-size: 2.25rem; border-radius: 50%;
      object-fit: cover; font-size: .8125rem; font-weight: 600; color: var(--_muted); background: var(--_border);
    }
    .content { display: flex; flex-flow: column; gap: .125rem; min-inline-size: 0; }
    .link { display: block; color: inherit; text-align: start; text-decoration: none; outline: 0; }
    .link::after { content: ''; position: absolute; inset: 0; }
    .link:focus-visible::after { outline: 2px solid var(--_focus-ring); outline-offset: -2px; }
    .own { display: block; }
    .own .link::after { pointer-events: none; }
    .subject, .body { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden; overflow-wrap: anywhere; unicode-bidi: plaintext; }
    .unread .subject { font-weight: 600; }
    .body { -webkit-line-clamp: 3; white-space: pre-line; margin: 0; color: var(--_muted); }
    .whole { display: block; }
    /* Above the row's link, as the CTA buttons are. */
    .more { z-index: 1; align-self: start; color: var(--_accent); font-size: var(--_font-size-small); font-weight: 500; }
    .more:hover { text-decoration: underline; }
    .aside { display: flex; flex-flow: column; align-items: end; gap: .25rem; }
    time, .result { color: var(--_muted); font-size: var(--_font-size-small); }
    time { white-space: nowrap; unicode-bidi: plaintext; }
    .actions, .controls { display: flex; z-index: 1; }
    .actions { flex-flow: wrap; gap: .5rem; margin-block-start: .5rem; }
    .action {
      max-inline-size: 100%; padding: .3125rem .75rem; color: var(--_text); font-size: var(--_font-size-small); font-weight: 500;
      overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
    }
    .primary { background: var(--_accent); border-color: var(--_accent); color: var(--_on-accent); }
    .primary:hover { background: var(--_accent-hover); border-color: var(--_accent-hover); }
    .result { display: flex; align-items: center; gap: .375rem; margin: .375rem 0 0; overflow-wrap: anywhere; }
    .controls { gap: .25rem; margin-inline-end: -.375rem; }
    .control { padding: .375rem; }
    .delete:hover { color: var(--_danger); }
    /* Where a pointer hovers, a row's controls show while it is hovered or holds the focus. */
    @media (hover: hover) {
      .base:not(:hover, :focus-within) .controls { opacity: 0; }
    }
  `,
];
