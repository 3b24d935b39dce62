import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host, .base { display: block; min-inline-size: 0; }
    :host([embedded]), :host([embedded]) .base { block-size: 100%; }
    .base {
      display: flex; flex-direction: column; overflow: clip;
      background: var(--_surface); border: 1px solid var(--_border); border-radius: var(--_radius);
    }
    :host([embedded]) .base { border: 0; border-radius: 0; }
    .header {
      display: flex; align-items: center; justify-content: space-between; gap: var(--_space);
      padding-block: calc(var(--_space) * .875) .25rem; padding-inline: var(--_space) calc(var(--_space) * .625);
    }
    .title { margin: 0; font-size: 1rem; font-weight: 600; letter-spacing: -.01em; }
    .tabs { display: flex; gap: .25rem; padding-inline: calc(var(--_space) * .625); border-block-end: 1px solid var(--_border); }
    .tab {
      position: relative; padding: .625rem .5rem; border: 0; background: none; color: var(--_muted);
      font-weight: 500; transition: color var(--_duration);
    }
    .tab:hover, .tab[aria-selected='true'] { color: var(--_text); }
    .tab[aria-selected='true']::after {
      content: ''; position: absolute; inset-inline: .375rem; inset-block-end: -1px; block-size: 2px;
      border-radius: 2px; background: var(--_accent);
    }
    .tab:focus-visible { outline-offset: -2px; }
    .body { position: relative; min-block-size: 12rem; }
    :host([embedded]) .body { flex: 1; min-block-size: 0; overflow-y: auto; overscroll-behavior: contain; }
    .list { list-style: none; margin: 0; padding: 0; }
    .item + .item, .skeleton + .skeleton, .more { border-block-start: 1px solid var(--_border); }
    .sentinel { block-size: 1px; }
    .state {
      display: flex; flex-direction: column; align-items: center; justify-content: center; gap: .375rem;
      padding: 3rem 1.5rem; text-align: center; color: var(--_muted);
    }
    .state .icon {
      inline-size: 2rem; block-size: 2rem; margin-block-end: .5rem; padding: .5rem; box-sizing: content-box;
      border-radius: 50%; background: var(--_surface-hover);
    }
    .state p { margin: 0; }
    .state-title { color: var(--_text); font-weight: 600; }
    .state-hint, .banner, .more { font-size: var(--_font-size-small); }
    .state-hint { max-inline-size: 32ch; overflow-wrap: anywhere; }
    .retry {
      margin-block-start: .75rem; padding: .4375rem .875rem; border: 1px solid var(--_border);
      border-radius: var(--_radius-small); background: var(--_surface-raised); font-weight: 500;
    }
    .retry:hover { background: var(--_surface-hover); }
    .banner, .more { display: flex; align-items: center; gap: .5rem; padding: .5rem var(--_space); color: var(--_muted); }
    .banner { border-block-end: 1px solid var(--_border); background: var(--_surface-hover); }
    .banner .retry { margin: 0; margin-inline-start: auto; padding: .1875rem .5rem; font-size: inherit; }
    .more { justify-content: center; }
    .skeleton {
      display: grid; grid-template-columns: 2.25rem 1fr; gap: var(--_space);
      padding: var(--_space); padding-inline-start: calc(var(--_space) + .25rem);
    }
    .bone { block-size: .625rem; border-radius: var(--_radius-small); background: var(--_skeleton); animation: pulse 1.4s ease-in-out infinite; }
    .bone.avatar { block-size: 2.25rem; border-radius: 50%; }
    .lines { display: grid; gap: .5rem; padding-block-start: .25rem; }
    .line { inline-size: 90%; }
    .line + .line { inline-size: 55%; }
    .spinner {
      inline-size: .875rem; block-size: .875rem; border: 2px solid var(--_border); border-block-start-color: var(--_accent);
      border-radius: 50%; animation: spin .8s linear infinite;
    }
    @keyframes pulse { 50% { opacity: .45; } }
    @keyframes spin { to { transform: rotate(1turn); } }
  `,
];
