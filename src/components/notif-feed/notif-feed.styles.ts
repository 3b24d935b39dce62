import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host {
      display: block;
      min-inline-size: 0;
    }

    :host([embedded]) {
      block-size: 100%;
    }

    .base {
      display: flex;
      flex-direction: column;
      min-inline-size: 0;
      background: var(--_surface);
      border: 1px solid var(--_border);
      border-radius: var(--_radius);
      overflow: clip;
    }

    :host([embedded]) .base {
      block-size: 100%;
      border: 0;
      border-radius: 0;
    }

    .header {
      display: flex;
      align-items: center;
      justify-content: space-between;
      gap: var(--_space);
      padding-block: calc(var(--_space) * 0.875) 0.25rem;
      padding-inline: var(--_space) calc(var(--_space) * 0.625);
    }

    .title {
      margin: 0;
      font-size: 1rem;
      font-weight: 600;
      letter-spacing: -0.01em;
    }

    .tabs {
      display: flex;
      gap: 0.25rem;
      padding-inline: calc(var(--_space) * 0.625);
      border-block-end: 1px solid var(--_border);
    }

    .tab {
      position: relative;
      padding-block: 0.625rem;
      padding-inline: 0.5rem;
      border: 0;
      background: transparent;
      color: var(--_muted);
      font-weight: 500;
      cursor: pointer;
      transition: color var(--_duration);
    }

    .tab:hover {
      color: var(--_text);
    }

    .tab[aria-selected='true'] {
      color: var(--_text);
    }

    .tab[aria-selected='true']::after {
      content: '';
      position: absolute;
      inset-inline: 0.375rem;
      inset-block-end: -1px;
      block-size: 2px;
      border-radius: 2px;
      background: var(--_accent);
    }

    .tab:focus-visible {
      outline-offset: -2px;
    }

    .body {
      position: relative;
      min-block-size: 12rem;
    }

    :host([embedded]) .body {
      flex: 1;
      min-block-size: 0;
      overflow-y: auto;
      overscroll-behavior: contain;
    }

    .list {
      list-style: none;
      margin: 0;
      padding: 0;
    }

    .item + .item {
      border-block-start: 1px solid var(--_border);
    }

    .sentinel {
      block-size: 1px;
    }

    .state {
      display: flex;
      flex-direction: column;
      align-items: center;
      justify-content: center;
      gap: 0.375rem;
      padding-block: 3rem;
      padding-inline: 1.5rem;
      text-align: center;
      color: var(--_muted);
    }

    .state .icon {
      inline-size: 2rem;
      block-size: 2rem;
      margin-block-end: 0.5rem;
      padding: 0.5rem;
      box-sizing: content-box;
      border-radius: 50%;
      background: var(--_surface-hover);
      color: var(--_muted);
    }

    .state-title {
      margin: 0;
      color: var(--_text);
      font-weight: 600;
    }

    .state-hint {
      margin: 0;
      font-size: var(--_font-size-small);
      max-inline-size: 32ch;
      overflow-wrap: anywhere;
    }

    .retry {
      margin-block-start: 0.75rem;
      padding-block: 0.4375rem;
      padding-inline: 0.875rem;
      border: 1px solid var(--_border);
      border-radius: var(--_radius-small);
      background: var(--_surface-raised);
      font-weight: 500;
      cursor: pointer;
    }

    .retry:hover {
      background: var(--_surface-hover);
    }

    .banner {
      display: flex;
      align-items: center;
      gap: 0.5rem;
      padding-block: 0.5rem;
      padding-inline: var(--_space);
      border-block-end: 1px solid var(--_border);
      background: var(--_surface-hover);
      color: var(--_muted);
      font-size: var(--_font-size-small);
    }

    .banner .retry {
      margin-block-start: 0;
      margin-inline-start: auto;
      padding-block: 0.1875rem;
      padding-inline: 0.5rem;
      font-size: var(--_font-size-small);
    }

    .skeleton {
      display: grid;
      grid-template-columns: 2.25rem 1fr;
      gap: var(--_space);
      padding: var(--_space);
      padding-inline-start: calc(var(--_space) + 0.25rem);
    }

    .skeleton + .skeleton {
      border-block-start: 1px solid var(--_border);
    }

    .bone {
      border-radius: var(--_radius-small);
      background: var(--_skeleton);
      animation: pulse 1.4s ease-in-out infinite;
    }

    .bone.avatar {
      block-size: 2.25rem;
      border-radius: 50%;
    }

    .lines {
      display: flex;
      flex-direction: column;
      gap: 0.5rem;
      padding-block-start: 0.25rem;
    }

    .bone.line {
      block-size: 0.625rem;
      inline-size: 90%;
    }

    .bone.line.short {
      inline-size: 55%;
    }

    .more {
      display: flex;
      align-items: center;
      justify-content: center;
      gap: 0.5rem;
      padding: var(--_space);
      color: var(--_muted);
      font-size: var(--_font-size-small);
      border-block-start: 1px solid var(--_border);
    }

    .spinner {
      inline-size: 0.875rem;
      block-size: 0.875rem;
      border: 2px solid var(--_border);
      border-block-start-color: var(--_accent);
      border-radius: 50%;
      animation: spin 0.8s linear infinite;
    }

    @keyframes pulse {
      50% {
        opacity: 0.45;
      }
    }

    @keyframes spin {
      to {
        transform: rotate(1turn);
      }
    }

    @media (prefers-reduced-motion: reduce) {
      .bone,
      .spinner {
        animation: none;
      }
    }
  `,
];
