import { LitElement } from 'lit';
import { VERSION } from './version.ts';

// Tags already warned about, shared by every copy of the package on the page (the script-tag file
// loaded twice, or beside an app's bundle), so a page shows one warning per tag, not one per copy.
const warned: Set<string> = ((globalThis as { [key: symbol]: Set<string> })[Symbol.for('notif-inbox.warned')] ??= new Set());

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
