import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host {
      display: block;
      min-inline-size: 0;
    }

    .base {
      position: relative;
      display: grid;
      grid-template-columns: auto minmax(0, 1fr) auto;
      column-gap: var(--_space);
      padding-block: var(--_space);
      padding-inline: calc(var(--_space) + 0.25rem) var(--_space);
      background: var(--_surface);
      transition: background-color var(--_duration);
    }

    .base.unread {
      background: var(--_surface-unread);
    }

    .base:hover {
      background: var(--_surface-hover);
    }

    .dot {
      position: absolute;
      inset-inline-start: 0.375rem;
      inset-block-start: calc(var(--_space) + 0.9rem);
      inline-size: 0.4375rem;
      block-size: 0.4375rem;
      border-radius: 50%;
      background: var(--_unread);
    }

    /* Avatar: an image, or initials on a tone chosen from the text. */
    .avatar {
      display: grid;
      place-items: center;
      inline-size: 2.25rem;
      block-size: 2.25rem;
      border-radius: 50%;
      overflow: hidden;
      object-fit: cover;
      font-size: 0.8125rem;
      font-weight: 600;
      letter-spacing: 0.02em;
      color: #fff;
      background: #6b7280;
      user-select: none;
    }
    .avatar[data-tone='0'] { background: #4f46e5; }
    .avatar[data-tone='1'] { background: #0f766e; }
    .avatar[data-tone='2'] { background: #b45309; }
    .avatar[data-tone='3'] { background: #be185d; }
    .avatar[data-tone='4'] { background: #1d4ed8; }
    .avatar[data-tone='5'] { background: #7c3aed; }
    .avatar[data-tone='6'] { background: #15803d; }

    .content {
      min-inline-size: 0;
      display: flex;
      flex-direction: column;
      gap: 0.125rem;
    }

    .link {
      display: block;
      padding: 0;
      margin: 0;
      border: 0;
      background: none;
      text-align: start;
      text-decoration: none;
      color: inherit;
      cursor: pointer;
      font: inherit;
      outline: none;
    }

    /* The link covers the whole message; the buttons above it stay clickable. */
    .link::after {
      content: '';
      position: absolute;
      inset: 0;
    }

    .link:focus-visible::after {
      outline: 2px solid var(--_focus);
      outline-offset: -2px;
    }

    .subject {
      display: -webkit-box;
      -webkit-box-orient: vertical;
      -webkit-line-clamp: 2;
      line-clamp: 2;
      overflow: hidden;
      overflow-wrap: anywhere;
      font-weight: 500;
      color: var(--_text);
    }

    .unread .subject {
      font-weight: 600;
    }

    .body {
      display: -webkit-box;
      -webkit-box-orient: vertical;
      -webkit-line-clamp: 3;
      line-clamp: 3;
      overflow: hidden;
      overflow-wrap: anywhere;
      white-space: pre-line;
      margin: 0;
      color: var(--_muted);
    }

    /* The time, and in its place on hover or focus, the menu button. */
    .aside {
      display: grid;
      justify-items: end;
      align-items: start;
    }

    .aside > * {
      grid-area: 1 / 1;
    }

    .base:hover .time,
    .base:focus-within .time,
    .menu-wrap.open ~ .time {
      visibility: hidden;
    }

    .time {
      padding-block-start: 0.0625rem;
      color: var(--_muted);
      font-size: var(--_font-size-small);
      white-space: nowrap;
      font-variant-numeric: tabular-nums;
    }

    .actions {
      position: relative;
      z-index: 1;
      display: flex;
      flex-wrap: wrap;
      gap: 0.5rem;
      margin-block-start: 0.5rem;
    }

    .action {
      padding-block: 0.3125rem;
      padding-inline: 0.75rem;
      border-radius: var(--_radius-small);
      border: 1px solid var(--_border);
      background: var(--_surface-raised);
      color: var(--_text);
      font-size: var(--_font-size-small);
      font-weight: 500;
      cursor: pointer;
      transition: background-color var(--_duration), border-color var(--_duration);
      max-inline-size: 100%;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }

    .action:hover {
      background: var(--_surface-hover);
    }

    .action.primary {
      background: var(--_accent);
      border-color: var(--_accent);
      color: var(--_on-accent);
    }

    .action.primary:hover {
      background: var(--_accent-hover);
      border-color: var(--_accent-hover);
    }

    .result {
      display: inline-flex;
      align-items: center;
      gap: 0.375rem;
      margin: 0;
      margin-block-start: 0.375rem;
      color: var(--_muted);
      font-size: var(--_font-size-small);
      overflow-wrap: anywhere;
    }

    .menu-wrap {
      position: relative;
      z-index: 1;
    }

    .menu-wrap.open {
      z-index: 3;
    }

    .menu-button {
      padding: 0.1875rem;
      margin-block: -0.1875rem;
      opacity: 0;
    }

    .base:hover .menu-button,
    .base:focus-within .menu-button,
    .menu-button[aria-expanded='true'] {
      opacity: 1;
    }

    @media (hover: none) {
      .aside {
        display: flex;
        gap: 0.25rem;
      }

      .menu-button {
        opacity: 1;
      }
    }

    .menu {
      position: absolute;
      z-index: 2;
      inset-block-start: calc(100% + 0.25rem);
      inset-inline-end: 0;
      min-inline-size: 11rem;
      padding: 0.25rem;
      border: 1px solid var(--_border);
      border-radius: var(--_radius);
      background: var(--_surface-raised);
      box-shadow: var(--_shadow);
    }

    .menu-item {
      display: flex;
      align-items: center;
      gap: 0.5rem;
      inline-size: 100%;
      padding-block: 0.4375rem;
      padding-inline: 0.5rem;
      border: 0;
      border-radius: var(--_radius-small);
      background: transparent;
      text-align: start;
      font-size: var(--_font-size);
      cursor: pointer;
    }

    .menu-item:hover,
    .menu-item:focus-visible {
      background: var(--_surface-hover);
      outline: none;
    }

    .menu-item.danger {
      color: var(--_danger);
    }
  `,
];
