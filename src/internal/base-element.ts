import { LitElement } from 'lit';
import { VERSION } from './version.ts';

const warned = new Set<string>();

/** The base of every notif-* element: guarded registration, and the version that registered it. */
export class NotifElement extends LitElement {
  static readonly version = VERSION;

  /**
   * Registers `tag` for this class unless a class is registered under it already: an embedded widget
   * is often loaded twice. Warns once when the one registered first is a different version.
   */
  static define(tag: string, ctor: CustomElementConstructor = this): void {
    if (typeof customElements === 'undefined') return;
    const existing = customElements.get(tag) as (CustomElementConstructor & { version?: string }) | undefined;
    if (!existing) {
      customElements.define(tag, ctor);
      return;
    }
    if (existing !== ctor && existing.version !== VERSION && !warned.has(tag)) {
      warned.add(tag);
      console.warn(
        `notif-inbox: <${tag}> is already registered by version ${existing.version ?? 'unknown'}; ` +
          `version ${VERSION} loaded on this page is not used for it.`,
      );
    }
  }
}
