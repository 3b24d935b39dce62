import { html, nothing, type PropertyDeclarations, type PropertyValues, type TemplateResult } from 'lit';
import type { CtaButton, Message } from '../../api/types.ts';
import type { InboxStoreApi, MessageActionType } from '../../store/types.ts';
import { LocalizeController } from '../../i18n/localize.ts';
import { NotifElement } from '../../internal/base-element.ts';
import { ClockController } from '../../internal/clock.ts';
import { emit } from '../../internal/emit.ts';
import { checkIcon, moreIcon } from '../../internal/icons.ts';
import type { Theme } from '../../internal/inbox-element.ts';
import { safeHref, safeImageSrc } from '../../internal/url.ts';
import styles from './notif-message.styles.ts';

/** The message's text: `content` as a string, or its text blocks joined. Never parsed as HTML. */
export function messageBody(message: Message): string {
  const c = message.content as unknown;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .filter((b): b is { content: string; type?: unknown } => !!b && typeof b === 'object' && typeof (b as { content?: unknown }).content === 'string')
    .filter((b) => b.type === undefined || b.type === 'text')
    .map((b) => b.content)
    .join('\n');
}

/** Up to two initials from a name or subject ("Ada Lovelace" -> "AL"). */
export function initials(text: string): string {
  const words = text
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  const letters = words.slice(0, 2).map((w) => Array.from(w)[0]!.toLocaleUpperCase());
  return letters.join('') || '•';
}

function tone(text: string): string {
  let h = 0;
  for (let i = 0; i < Math.min(text.length, 64); i++) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return String(h % 7);
}

const MAX_TEXT = 20_000;
function clip(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) + '…' : text;
}

/**
 * @summary One notification: avatar, subject, body, relative time, unread dot, CTA buttons, menu.
 *
 * @csspart row - The message row.
 * @csspart unread-dot - The dot shown while unread.
 * @csspart avatar - The avatar image or initials.
 * @csspart content - Subject, body and actions.
 * @csspart link - The control that opens the message (a link when it has a safe URL).
 * @csspart subject - The subject.
 * @csspart body - The body text.
 * @csspart time - The relative time.
 * @csspart actions - The CTA buttons.
 * @csspart button - Each CTA button (also `button-primary` / `button-secondary`).
 * @csspart action-result - What replaces the buttons once an action is done.
 * @csspart menu-button - The button opening the per-message menu.
 * @csspart menu - The menu.
 * @csspart menu-item - Each menu item.
 *
 * @fires notif-message-click - Cancelable; `preventDefault()` keeps the page instead of following the URL.
 * @fires notif-action - A CTA button was pressed.
 * @fires notif-read-change - The message was marked read or unread.
 */
export class NotifMessage extends NotifElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    message: { attribute: false },
    store: { attribute: false },
    markAsSupported: { attribute: false },
    active: { attribute: false },
    locale: { reflect: true },
    theme: { reflect: true },
    menuOpen: { state: true },
    failedAvatar: { state: true },
  };

  /** The message to show (untrusted: rendered as text only). */
  declare message: Message | undefined;
  /** The store whose actions the message calls (handed down by `<notif-feed>`). */
  declare store: InboxStoreApi | null | undefined;
  /** False hides the read/unread toggle (the server lacks the single-message endpoint). */
  declare markAsSupported: boolean;
  /** Whether the message holds its list's tab stop (set by `<notif-feed>`); others are reached with the arrow keys. */
  declare active: boolean;
  /** BCP 47 locale for the relative time. */
  declare locale: string | undefined;
  /** Colour scheme: `light`, `dark` or `auto`. */
  declare theme: Theme | undefined;
  declare private menuOpen: boolean;
  declare private failedAvatar: string | null;

  private readonly localize = new LocalizeController(this);
  private readonly clock = new ClockController(this);

  constructor() {
    super();
    this.markAsSupported = true;
    this.active = true;
    this.menuOpen = false;
    this.failedAvatar = null;
  }

  /** The message's safe redirect URL, or null. */
  get url(): string | null {
    return safeHref(this.message?.cta?.data?.url);
  }

  private get target(): string | null {
    const t = (this.message?.cta?.data as { target?: unknown } | undefined)?.target;
    return t === '_blank' ? '_blank' : null;
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.closeMenu(false);
  }

  /** Focuses the control that opens the message. */
  override focus(options?: FocusOptions) {
    this.link?.focus(options);
  }

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has('message') && this.failedAvatar && this.failedAvatar !== this.message?.avatar) this.failedAvatar = null;
  }

  override render() {
    const m = this.message;
    if (!m) return nothing;
    const subject = typeof m.subject === 'string' ? clip(m.subject) : '';
    const body = clip(messageBody(m));
    const title = subject || body;
    const created = new Date(m.createdAt);
    const validDate = !Number.isNaN(created.getTime());
    const url = this.url;
    const tab = this.active ? 0 : -1;
    const linkContent = html`${m.read ? nothing : html`<span class="sr-only">${this.localize.term('unread')}: </span>`}<span
        part="subject"
        class="subject"
        >${title || this.localize.term('openNotification')}</span
      >`;
    return html`
      <div part="row" class="base ${m.read ? 'read' : 'unread'}">
        ${m.read ? nothing : html`<span part="unread-dot" class="dot" aria-hidden="true"></span>`} ${this.renderAvatar(m, title)}
        <div part="content" class="content">
          ${url
            ? html`<a
                part="link"
                class="link"
                href=${url}
                target=${this.target ?? nothing}
                rel=${this.target ? 'noopener noreferrer' : nothing}
                tabindex=${tab}
                @click=${this.onActivate}
                @keydown=${(e: KeyboardEvent) => e.key === ' ' && (e.preventDefault(), this.link?.click())}
                >${linkContent}</a
              >`
            : html`<button part="link" class="link" type="button" tabindex=${tab} @click=${this.onActivate}>${linkContent}</button>`}
          ${subject && body ? html`<p part="body" class="body">${body}</p>` : nothing} ${this.renderActions(m, tab)}
        </div>
        <div class="aside">
          ${this.store ? this.renderMenu(m, tab) : nothing}
          ${validDate
            ? html`<time part="time" class="time" datetime=${created.toISOString()} title=${this.localize.dateTime(created)}
                >${this.localize.relativeTime(created, this.clock.now)}</time
              >`
            : nothing}
        </div>
      </div>
    `;
  }

  private renderAvatar(m: Message, title: string): TemplateResult {
    const src = safeImageSrc(m.avatar);
    if (src && this.failedAvatar !== m.avatar) {
      return html`<img
        part="avatar"
        class="avatar"
        src=${src}
        alt=""
        loading="lazy"
        decoding="async"
        referrerpolicy="no-referrer"
        @error=${() => (this.failedAvatar = m.avatar ?? null)}
      />`;
    }
    const source = title || m.templateIdentifier || '';
    return html`<span part="avatar" class="avatar" data-tone=${tone(source)} aria-hidden="true">${initials(source.slice(0, 200))}</span>`;
  }

  private renderActions(m: Message, tab: number) {
    const action = m.cta?.action;
    const buttons = (Array.isArray(action?.buttons) ? action.buttons : []).filter(
      (b): b is CtaButton => !!b && typeof b === 'object' && typeof b.content === 'string' && !!b.content.trim(),
    );
    if (buttons.length === 0) return nothing;
    if (action?.status === 'done') {
      const chosen = buttons.find((b) => b.type === action.result?.type);
      const text = (chosen?.resultContent && clip(chosen.resultContent)) || this.localize.term('done');
      return html`<p part="action-result" class="result" role="status">${checkIcon()}<span>${text}</span></p>`;
    }
    return html`<div part="actions" class="actions">
      ${buttons.slice(0, 4).map((b) => {
        const type: MessageActionType = b.type === 'primary' ? 'primary' : 'secondary';
        return html`<button
          part="button button-${type}"
          class="action ${type}"
          type="button"
          tabindex=${tab}
          @click=${(e: Event) => this.onAction(e, type)}
        >
          ${clip(b.content).slice(0, 200)}
        </button>`;
      })}
    </div>`;
  }

  private renderMenu(m: Message, tab: number) {
    const items: TemplateResult[] = [];
    if (this.markAsSupported) {
      items.push(
        m.read
          ? html`<button part="menu-item" class="menu-item" role="menuitem" type="button" tabindex="-1" @click=${() => this.setRead(false)}>
              ${this.localize.term('markUnread')}
            </button>`
          : html`<button part="menu-item" class="menu-item" role="menuitem" type="button" tabindex="-1" @click=${() => this.setRead(true)}>
              ${this.localize.term('markRead')}
            </button>`,
      );
    }
    items.push(
      html`<button part="menu-item" class="menu-item danger" role="menuitem" type="button" tabindex="-1" @click=${this.onDelete}>
        ${this.localize.term('delete')}
      </button>`,
    );
    return html`<div class="menu-wrap ${this.menuOpen ? 'open' : ''}">
      <button
        part="menu-button"
        class="ghost menu-button"
        type="button"
        aria-haspopup="menu"
        aria-expanded=${this.menuOpen ? 'true' : 'false'}
        aria-controls="menu"
        aria-label=${this.localize.term('moreActions')}
        title=${this.localize.term('moreActions')}
        tabindex=${tab}
        @click=${this.toggleMenu}
        @keydown=${this.onMenuButtonKey}
      >
        ${moreIcon()}
      </button>
      <div
        part="menu"
        id="menu"
        class="menu"
        role="menu"
        aria-label=${this.localize.term('moreActions')}
        ?hidden=${!this.menuOpen}
        @keydown=${this.onMenuKey}
        @focusout=${this.onMenuFocusOut}
      >
        ${items}
      </div>
    </div>`;
  }

  private onActivate = async (e: MouseEvent) => {
    const m = this.message;
    if (!m) return;
    const url = this.url;
    const store = this.store;
    let marked: Promise<unknown> = Promise.resolve();
    if (!m.read && store) {
      marked = store.markRead(m._id).catch(() => undefined);
      emit(this, 'notif-read-change', { messageIds: [m._id], read: true });
    }
    const event = emit(this, 'notif-message-click', { message: m, url }, { cancelable: true });
    if (event.defaultPrevented) {
      e.preventDefault();
      return;
    }
    // No URL, a new tab or window asked for (modifier keys, target=_blank): the browser does the rest.
    if (!url || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || this.target) return;
    // Same tab: let the read mark reach the server first (briefly), then leave.
    e.preventDefault();
    await Promise.race([marked, new Promise((r) => setTimeout(r, 800))]);
    location.assign(url);
  };

  private onAction(e: Event, type: MessageActionType) {
    e.stopPropagation();
    const m = this.message;
    if (!m || !this.store) return;
    this.focus(); // the buttons give way to the result
    this.store.action(m._id, type).catch(() => undefined);
    emit(this, 'notif-action', { message: m, button: type, status: 'done' });
  }

  private setRead(read: boolean) {
    const m = this.message;
    this.closeMenu(true);
    if (!m || !this.store) return;
    (read ? this.store.markRead(m._id) : this.store.markUnread(m._id)).catch(() => undefined);
    emit(this, 'notif-read-change', { messageIds: [m._id], read });
  }

  private onDelete = () => {
    const m = this.message;
    this.closeMenu(false);
    if (!m || !this.store) return;
    this.store.remove(m._id).catch(() => undefined);
  };

  private get link(): HTMLElement | null {
    return this.renderRoot.querySelector('.link');
  }

  private get menuItems(): HTMLElement[] {
    return Array.from(this.renderRoot.querySelectorAll<HTMLElement>('[role="menuitem"]'));
  }

  private toggleMenu = () => {
    if (this.menuOpen) this.closeMenu(true);
    else void this.openMenu(0);
  };

  private async openMenu(index: number) {
    this.menuOpen = true;
    document.addEventListener('pointerdown', this.onOutside, true);
    await this.updateComplete;
    const items = this.menuItems;
    items.at(index)?.focus();
  }

  private closeMenu(refocus: boolean) {
    if (!this.menuOpen) return;
    this.menuOpen = false;
    document.removeEventListener('pointerdown', this.onOutside, true);
    if (refocus) this.renderRoot.querySelector<HTMLElement>('.menu-button')?.focus();
  }

  private onOutside = (e: Event) => {
    if (!e.composedPath().includes(this)) this.closeMenu(false);
  };

  private onMenuButtonKey = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      void this.openMenu(e.key === 'ArrowDown' ? 0 : -1);
    }
  };

  private onMenuKey = (e: KeyboardEvent) => {
    const items = this.menuItems;
    const i = items.indexOf(((this.renderRoot as ShadowRoot).activeElement as HTMLElement | null) ?? items[0]!);
    let next = -2;
    if (e.key === 'ArrowDown') next = (i + 1) % items.length;
    else if (e.key === 'ArrowUp') next = (i - 1 + items.length) % items.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = items.length - 1;
    else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation(); // closes the menu, not the popover around it
      this.closeMenu(true);
      return;
    } else if (e.key === 'Tab') {
      this.closeMenu(true); // Tab goes on from the menu button
      return;
    }
    if (next >= 0) {
      e.preventDefault();
      items[next]?.focus();
    }
  };

  private onMenuFocusOut = (e: FocusEvent) => {
    const to = e.relatedTarget as Node | null;
    if (to && !this.renderRoot.contains(to)) this.closeMenu(false);
  };
}
