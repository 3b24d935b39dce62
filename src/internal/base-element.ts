import { LitElement } from 'lit';
import type { NotifEventDetails, NotifEventName } from '../events.ts';
import { localized } from '../i18n/localize.ts';
import { VERSION } from './version.ts';

/** Dispatches a typed `notif-*` event from `el` (bubbling, composed); returns whether no listener prevented it. */
export const emit = <K extends NotifEventName>(el: EventTarget, name: K, detail: NotifEventDetails[K], cancelable?: boolean): boolean =>
  el.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true, cancelable, detail }));

/** The base of every notif-* element: guarded registration, the version that registered it, localization. */
export class NotifElement extends LitElement {
  static readonly version = VERSION;

  override connectedCallback() {
    super.connectedCallback();
    localized.add(this);
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    localized.delete(this);
  }

  /**
   * Registers `tag` for this class unless a class is registered under it already: an embedded widget
   * is often loaded twice. Warns once when the one registered first is a different version.
   */
  static define(tag: string, ctor: CustomElementConstructor = this): void {
    // The class registered first is one per tag and seen by every copy of the package on the page (the
    // script-tag file loaded twice, or beside an app's bundle): marked once warned about, the page
    // shows one warning per tag, not one per copy.
    const existing = customElements.get(tag) as (CustomElementConstructor & { version?: string; notifWarned?: boolean }) | undefined;
    if (!existing) customElements.define(tag, ctor);
    else if (existing.version != VERSION && !existing.notifWarned) {
      existing.notifWarned = true;
      console.warn(`notif-inbox: <${tag}> is already registered by version ${existing.version}`);
    }
  }
}
