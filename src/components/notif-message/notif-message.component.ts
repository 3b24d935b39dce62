import { html, nothing, type PropertyDeclarations } from 'lit';
import type { CtaButton, Message } from '../../api/types.ts';
import type { InboxStoreApi, MessageActionType } from '../../store/types.ts';
import { formatDate, localeOf, relativeTime, translationFor } from '../../i18n/localize.ts';
import type { Translation } from '../../i18n/translation.ts';
import { NotifElement, emit } from '../../internal/base-element.ts';
import { checkIcon, closeIcon, mailIcon, userIcon } from '../../internal/icons.ts';
import type { Theme } from '../../internal/inbox-element.ts';
import type { MessageActions, MessageRenderer } from '../../internal/render-hooks.ts';
import { safeHref, safeImageSrc } from '../../internal/url.ts';
import styles from './notif-message.styles.ts';

export type { MessageActions, MessageRenderer };

/** The message's text: `content` as a string, or its text blocks joined. Never parsed as HTML. */
export function messageBody(message: Message): string {
  const content = message.content as unknown;
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content
        .filter((block) => typeof block?.content === 'string' && (block.type === undefined || block.type === 'text'))
        .map((block) => block.content)
        .join('\n')
    : '';
}

/** Up to two initials from a name or subject ("Ada Lovelace" -> "AL"). */
export function initials(text: string): string {
  // The first letter or digit of each of the first two words.
  return text.match(/(?<![\p{L}\p{N}])[\p{L}\p{N}]/gu)?.slice(0, 2).join('').toLocaleUpperCase() || '•';
}

/** Milliseconds between two renders of the connected messages' relative times. */
const CLOCK_INTERVAL = 30_000;
/** The connected messages, and the one clock that keeps their relative times current. */
const ticking = new Set<NotifMessage>();
let clock: ReturnType<typeof setInterval> | undefined;

/** The longest subject, body or label shown, in characters (longer ones are cut, with an ellipsis). */
const MAX_TEXT_LENGTH = 20_000;
/** The longest CTA button label or actor name shown, in characters. */
const MAX_LABEL_LENGTH = 200;
/** At most this many CTA buttons are shown. */
const MAX_BUTTONS = 4;
/** How long opening a message waits, at most, for its read mark to reach the server before the page leaves (ms). */
const REDIRECT_WAIT = 800;
/** The messages whose long body is shown whole ("Show more"), by id: a row's element may come to show another message. */
const expandedBodies = new Set<string>();

/** A string as shown (at most MAX_TEXT_LENGTH characters); anything else is ''. */
function clip(text: unknown): string {
  if (typeof text != 'string') return '';
  return text.length > MAX_TEXT_LENGTH ? text.slice(0, MAX_TEXT_LENGTH) + '…' : text;
}

/**
 * @summary One notification: avatar, subject, body, relative time, unread dot, CTA buttons, and
 * buttons to mark it read or unread and to delete it.
 *
 * @slot message - Replaces the whole row's content (the row keeps its focus and unread marks).
 * @slot avatar - Replaces the avatar.
 * @slot subject - Replaces the subject.
 * @slot body - Replaces the body.
 * @slot actions - Replaces the CTA buttons.
 *
 * @csspart row - The message row.
 * @csspart unread-dot - The dot shown while unread.
 * @csspart avatar - The message's avatar image; else the initials of the actor the payload names (`actor`: a name, or `{name}`); else a neutral icon.
 * @csspart content - Subject, body and actions.
 * @csspart link - The control that opens the message (a link when it has a safe URL).
 * @csspart subject - The subject.
 * @csspart body - The body text, cut after three lines; a longer one has "Show more" under it.
 * @csspart more-button - "Show more" under a body cut short ("Show less" once shown whole).
 * @csspart time - The compact relative time ("2h"); its title is the full date and time.
 * @csspart actions - The CTA buttons.
 * @csspart button - Each CTA button (also `button-primary` / `button-secondary`).
 * @csspart action-result - What replaces the buttons once an action is done.
 * @csspart read-button - Marks the message read (or unread when it is read).
 * @csspart delete-button - Deletes the message.
 *
 * @fires notif-message-click - Cancelable; `preventDefault()` keeps the page instead of following the URL.
 * @fires notif-action - A CTA button was pressed (an unread message is marked read too, with `notif-read-change`); then the button's own URL (`detail.url`, http(s) or relative only) is followed once the server recorded the action, unless `preventDefault()` (for SPA routers).
 * @fires notif-read-change - The message was marked read or unread.
 */
export class NotifMessage extends NotifElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    message: { attribute: false },
    store: { attribute: false },
    markAsSupported: { attribute: false },
    active: { attribute: false },
    custom: { attribute: false },
    locale: { reflect: true },
    theme: { reflect: true },
  };

  /** The message to show (untrusted: rendered as text only). */
  declare message: Message | undefined;
  /** The store whose actions the message calls (handed down by `<notif-feed>`). */
  declare store: InboxStoreApi | null | undefined;
  /** False hides the read/unread toggle (the server lacks the single-message endpoint). */
  declare markAsSupported: boolean;
  /** Whether the message holds its list's tab stop (set by `<notif-feed>`); others are reached with the arrow keys. */
  declare active: boolean;
  /** The row shows only its `message` slot (an app's own rendering), with the focus ring and unread marks. */
  declare custom: boolean;
  /** BCP 47 locale for the relative time. */
  declare locale: string | undefined;
  /** Colour scheme: `auto` (the default: follows the system), `light` or `dark`. */
  declare theme: Theme | undefined;
  /** The avatar URL that failed to load (initials instead). */
  #failed?: string;
  /** The body is longer than its lines (measured as laid out): "Show more". */
  #long = false;
  /** The body element measured, and the message it showed then. */
  #measured?: Element;
  #measuredId?: string;

  /** Tells each body whether it is longer than its lines, as it is laid out (no layout is forced). */
  static #bodies = new ResizeObserver((entries) => {
    for (const { target } of entries) {
      const message = (target.getRootNode() as ShadowRoot).host as NotifMessage;
      // A body shown whole stays long (its button says "Show less").
      const long = target.scrollHeight > target.clientHeight || target.classList.contains('whole');
      if (long != message.#long) {
        message.#long = long;
        message.requestUpdate();
      }
    }
  });

  constructor() {
    super();
    this.markAsSupported = this.active = true;
    this.custom = false;
  }

  /** The actions on the message shown now, for a custom renderer. */
  get actions(): MessageActions {
    const message = this.message!;
    const store = this.store!;
    return {
      open: () => this.#open(message),
      markRead: () => this.#setRead(true, message),
      markUnread: () => this.#setRead(false, message),
      action: (button) => this.#act(message, button),
      remove: () => store.remove(message._id),
    };
  }

  /** The message's safe redirect URL, or null. */
  get url(): string | null {
    return safeHref(this.message?.cta?.data?.url);
  }

  /** Whether the link opens a new tab (then with rel="noreferrer", which implies noopener). */
  get #blank(): boolean {
    return (this.message?.cta?.data as { target?: unknown } | undefined)?.target === '_blank';
  }

  // The relative times stay current: one clock re-renders every connected message every 30 s
  // (none runs while no message is connected).
  override connectedCallback() {
    super.connectedCallback();
    if (this.#measured) NotifMessage.#bodies.observe(this.#measured);
    ticking.add(this);
    if (!clock) clock = setInterval(() => ticking.forEach((message) => message.requestUpdate()), CLOCK_INTERVAL);
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    if (this.#measured) NotifMessage.#bodies.unobserve(this.#measured);
    ticking.delete(this);
    if (!ticking.size) {
      clearInterval(clock);
      clock = undefined;
    }
  }

  /** Focuses the control that opens the message. */
  override focus(options?: FocusOptions) {
    this.renderRoot.querySelector<HTMLElement>('.link')?.focus(options);
  }

  override render() {
    const message = this.message;
    if (!message) return nothing;
    const locale = localeOf(this);
    const strings = translationFor(locale);
    const subject = clip(message.subject);
    const body = clip(messageBody(message));
    const title = subject || body;
    const created = new Date(message.createdAt);
    const url = this.url;
    const tab = this.active ? 0 : -1;
    const src = safeImageSrc(message.avatar);
    // The CTA buttons with a label (at most MAX_BUTTONS shown); once the action is done, its result instead.
    const action = message.cta?.action;
    const buttons = (Array.isArray(action?.buttons) ? action.buttons : []).filter((button) => clip(button?.content).trim()) as CtaButton[];
    const readLabel = message.read ? strings.markUnread : strings.markRead;
    // Initials only of a person the payload names (`actor`: a name, or an object with one); else an icon.
    const actor = (message.payload as { actor?: { name?: unknown } } | undefined)?.actor;
    const who = clip(typeof actor == 'object' ? actor?.name : actor).slice(0, MAX_LABEL_LENGTH);
    const date = isNaN(+created) ? '' : formatDate(created, locale);
    // The dot sits in the link but is placed on the row (the nearest positioned box).
    const dot = message.read ? nothing : html`<span part="unread-dot" class="dot" aria-hidden="true"></span><span class="sr-only">${strings.unread}: </span>`;
    const link = html`${dot}<slot name="subject"><span
        part="subject"
        class="subject"
        >${title || strings.openNotification}</span
      ></slot><span class="sr-only"> ${date}</span>`;
    if (this.custom) {
      return html`<div part="row" class="base own ${message.read ? '' : 'unread'}"><div
          part="link"
          class="link"
          tabindex=${tab}
          @keydown=${this.#onCustomRowKey}
          >${dot}<slot name="message"></slot></div
      ></div>`;
    }
    // Buttons need no type="button": there is no form in the shadow root for them to submit.
    return html`<div part="row" class="base ${message.read ? '' : 'unread'}"><slot name="avatar">${src && this.#failed !== message.avatar
        ? html`<img
            part="avatar"
            class="avatar"
            src=${src}
            alt=""
            loading="lazy"
            referrerpolicy="no-referrer"
            @error=${() => {
              this.#failed = message.avatar;
              this.requestUpdate();
            }}
          />`
        : html`<span part="avatar" class="avatar" aria-hidden="true">${who ? initials(who) : userIcon}</span>`}</slot><div
        part="content"
        class="content"
      >${url
          ? html`<a
              part="link"
              class="link"
              href=${url}
              target=${this.#blank ? '_blank' : nothing}
              rel=${this.#blank ? 'noreferrer' : nothing}
              tabindex=${tab}
              @click=${this.#onActivate}
              @keydown=${this.#onLinkKey}
              >${link}</a
            >`
          : html`<button part="link" class="link" tabindex=${tab} @click=${this.#onActivate}>${link}</button>`}<slot name="body">${subject && body
          ? this.#renderBody(body, tab, strings)
          : nothing}</slot><slot name="actions">${!buttons.length
          ? nothing
          : action!.status === 'done'
            ? html`<p part="action-result" class="result" role="status">${checkIcon}<span
                  >${clip(buttons.find((button) => button.type === action!.result?.type)?.resultContent) || strings.done}</span
                ></p>`
            : html`<div part="actions" class="actions">${buttons.slice(0, MAX_BUTTONS).map((button) => {
                const type: MessageActionType = button.type === 'primary' ? 'primary' : 'secondary';
                return html`<button part="button button-${type}" class="outline action ${type}" tabindex=${tab} @click=${() => {
                    this.focus(); // the buttons give way to the result
                    void this.#act(message, type);
                  }}
                  >${button.content.slice(0, MAX_LABEL_LENGTH)}</button
                >`;
              })}</div>`}</slot></div
      ><div class="aside">${date
          ? html`<time part="time" datetime=${created.toISOString()} title=${date}>${relativeTime(created, Date.now(), locale)}</time>`
          : nothing}${this.store
          ? html`<span class="controls"
              >${this.markAsSupported
                ? html`<button part="read-button" class="ghost control" aria-label=${readLabel} title=${readLabel} tabindex=${tab} @click=${() => this.#setRead(!message.read)}>${message.read ? mailIcon : checkIcon}</button>`
                : nothing}<button part="delete-button" class="ghost control delete" aria-label=${strings.delete} title=${strings.delete} tabindex=${tab} @click=${() => this.store!.remove(message._id)}>${closeIcon}</button></span
            >`
          : nothing}</div></div>`;
  }

  /** The body, cut after its lines; when it is longer, "Show more" (and "Show less"), announced as expanded or not. */
  #renderBody(body: string, tab: number, strings: Translation) {
    const id = this.message!._id;
    const whole = expandedBodies.has(id);
    return html`<p part="body" id="body" class="body ${whole ? 'whole' : ''}">${body}</p>${this.#long
      ? html`<button part="more-button" class="more" aria-expanded=${whole} aria-controls="body" tabindex=${tab} @click=${() => {
          if (whole) expandedBodies.delete(id);
          else expandedBodies.add(id);
          this.requestUpdate();
        }}>${whole ? strings.showLess : strings.showMore}</button>`
      : nothing}`;
  }

  protected override updated() {
    // The body shown is measured as it is laid out, again when its size changes, and when the row
    // shows another message (observing anew measures at once, whatever the size).
    const body = this.renderRoot.querySelector('.body');
    const id = this.message?._id;
    if (body && (body != this.#measured || id != this.#measuredId)) {
      if (this.#measured) NotifMessage.#bodies.unobserve(this.#measured);
      NotifMessage.#bodies.observe(body);
      this.#measured = body;
      this.#measuredId = id;
    }
  }

  #onActivate = (event: MouseEvent) => this.#open(this.message!, event);

  /** Enter on a custom row's own focusable box (not on a control an app rendered in it) opens the message. */
  #onCustomRowKey = (event: KeyboardEvent) => {
    if (event.target == event.currentTarget && event.key == 'Enter') void this.#open(this.message!);
  };

  /** Space on the link opens it, as it does a button. */
  #onLinkKey = (event: KeyboardEvent) => {
    if (event.key !== ' ') return;
    event.preventDefault();
    (event.target as HTMLElement).click();
  };

  /**
   * Opens `m`: marks it read, fires the cancelable click event, and follows a safe URL in this tab
   * (after the read mark reached the server, briefly). From a click (`e`), a new tab or window asked
   * for (modifier keys, target=_blank) is left to the browser.
   */
  async #open(message: Message, event?: MouseEvent) {
    const url = safeHref(message.cta?.data?.url);
    const marked = message.read ? undefined : this.#setRead(true, message);
    if (!emit(this, 'notif-message-click', { message, url }, true)) {
      event?.preventDefault();
      return;
    }
    if (!url) return;
    const newTabAsked = event && (event.button || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || this.#blank);
    if (newTabAsked) return;
    event?.preventDefault();
    return this.#go(url, marked);
  }

  /** Follows a safe `url` in this tab once `recorded` (what the click changed) reached the server, or after a moment. */
  async #go(url: string, recorded: unknown) {
    await Promise.race([recorded, new Promise((resolve) => setTimeout(resolve, REDIRECT_WAIT))]);
    location.assign(url);
  }

  /**
   * Runs a CTA button's action (the store marks the message read too, and the events say so); then,
   * unless the cancelable `notif-action` was prevented, follows the button's safe URL, as opening a
   * message follows its own. Resolves when the server has answered.
   */
  async #act(message: Message, button: MessageActionType) {
    const url = safeHref(message.cta?.action?.buttons?.find((candidate) => candidate?.type == button)?.url);
    const store = this.store;
    if (!message.read && store) emit(this, 'notif-read-change', { messageIds: [message._id], read: true });
    const done = store?.action(message._id, button);
    const followed = emit(this, 'notif-action', { message, button, status: 'done', url }, true);
    if (followed && url) void this.#go(url, done);
    await done;
  }

  /** Marks the message read or unread; resolves when the server has answered. */
  async #setRead(read: boolean, message = this.message!) {
    const store = this.store;
    if (store) {
      emit(this, 'notif-read-change', { messageIds: [message._id], read });
      await (read ? store.markRead(message._id) : store.markUnread(message._id));
    }
  }
}
