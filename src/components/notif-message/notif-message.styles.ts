import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host { display: block; min-inline-size: 0; }
    .base {
      position: relative; display: grid; grid-template-columns: auto minmax(0, 1fr) auto; column-gap: var(--_space);
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
      overflow: hidden; object-fit: cover; user-select: none;
      font-size: .8125rem; font-weight: 600; letter-spacing: .02em; color: #fff; background: #6b7280;
    }
    [data-tone='0'] { background: #4f46e5; }
    [data-tone='1'] { background: #0f766e; }
    [data-tone='2'] { background: #b45309; }
    [data-tone='3'] { background: #be185d; }
    [data-tone='4'] { background: #1d4ed8; }
    [data-tone='5'] { background: #7c3aed; }
    [data-tone='6'] { background: #15803d; }
    .content { display: flex; flex-direction: column; gap: .125rem; min-inline-size: 0; }
    .link { display: block; margin: 0; padding: 0; border: 0; background: none; color: inherit; text-align: start; text-decoration: none; outline: none; }
    .link::after { content: ''; position: absolute; inset: 0; }
    .link:focus-visible::after { outline: 2px solid var(--_focus); outline-offset: -2px; }
    .subject, .body { display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; overflow-wrap: anywhere; unicode-bidi: plaintext; }
    .subject { -webkit-line-clamp: 2; line-clamp: 2; font-weight: 500; color: var(--_text); }
    .unread .subject { font-weight: 600; }
    .body { -webkit-line-clamp: 3; line-clamp: 3; white-space: pre-line; margin: 0; color: var(--_muted); }
    .aside { display: grid; justify-items: end; align-items: start; }
    .aside > * { grid-area: 1 / 1; }
    .base:hover .time, .base:focus-within .time, .open ~ .time { visibility: hidden; }
    .time, .result { color: var(--_muted); font-size: var(--_font-size-small); }
    .time { padding-block-start: 1px; white-space: nowrap; font-variant-numeric: tabular-nums; }
    .actions, .menu-wrap { position: relative; z-index: 1; }
    .actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-block-start: .5rem; }
    .action {
      max-inline-size: 100%; padding: .3125rem .75rem; border: 1px solid var(--_border); border-radius: var(--_radius-small);
      background: var(--_surface-raised); color: var(--_text); font-size: var(--_font-size-small); font-weight: 500;
      overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
      transition: background-color var(--_duration), border-color var(--_duration);
    }
    .action:hover { background: var(--_surface-hover); }
    .primary { background: var(--_accent); border-color: var(--_accent); color: var(--_on-accent); }
    .primary:hover { background: var(--_accent-hover); border-color: var(--_accent-hover); }
    .result { display: inline-flex; align-items: center; gap: .375rem; margin: 0; margin-block-start: .375rem; overflow-wrap: anywhere; }
    .menu-wrap.open { z-index: 3; }
    .menu-button { padding: .1875rem; margin-block: -.1875rem; opacity: 0; }
    .base:hover .menu-button, .base:focus-within .menu-button, .open .menu-button { opacity: 1; }
    @media (hover: none) {
      .aside { display: flex; gap: .25rem; }
      .menu-button { opacity: 1; }
    }
    .menu {
      position: absolute; z-index: 2; inset-block-start: calc(100% + .25rem); inset-inline-end: 0;
      min-inline-size: 11rem; padding: .25rem; border: 1px solid var(--_border); border-radius: var(--_radius);
      background: var(--_surface-raised); box-shadow: var(--_shadow);
    }
    .menu-item {
      display: flex; align-items: center; gap: .5rem; inline-size: 100%; padding: .4375rem .5rem; border: 0;
      border-radius: var(--_radius-small); background: none; text-align: start;
    }
    .menu-item:hover { background: var(--_surface-hover); }
    .menu-item:focus-visible { outline-offset: -2px; }
    .danger { color: var(--_danger); }
  `,
];
