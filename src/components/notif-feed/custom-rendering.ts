// What the feed and custom rendering's hosts (custom-hosts.ts, a chunk of its own in the ES build)
// share: the hosts' shape, an element's renderer of a piece, and the slot where custom-hosts.ts puts
// its renderer as it loads (the feed imports it only once a page sets a render hook).
import type { Message } from '../../api/types.ts';
import type { InboxElement } from '../../internal/inbox-element.ts';
import type { Hook, MessageRenderer } from '../../internal/render-hooks.ts';

/** An element's renderer of a piece (`render<Hook>`). */
export const hook = (element: InboxElement, piece: Hook): MessageRenderer | undefined => element[`render${piece}`];

/** A shown light-DOM host: its element, the message and renderer it was rendered with, the cleanup the renderer returned. */
export interface Host {
  element: HTMLElement;
  message: Message;
  renderer: MessageRenderer;
  cleanup?: () => void;
}

/** What renderHosts works on. */
export interface RenderHostsOptions {
  /** The feed whose shown rows get their custom pieces. */
  feed: HTMLElement & { renderRoot: HTMLElement | DocumentFragment };
  /** The outermost element (the feed, or the bell holding it): the hosts are its light-DOM children, and it has the renderers. */
  outer: InboxElement;
  /** The hosts rendered last time, by slot name (taken over or cleaned up). */
  previous: Map<string, Host>;
  /** The custom pieces of a row (`custom`: the row shows the app's whole message). */
  pieces: (custom: boolean) => Hook[];
  /** Messages renderMessage declined: their rows are built in from now on. */
  declined: WeakSet<Message>;
  /** The rows went: every host is cleaned up and removed. */
  gone?: boolean;
}

export type RenderHosts = (options: RenderHostsOptions) => Map<string, Host>;

/** custom-hosts.ts's renderer, once that module is loaded (it registers itself). */
let loaded: RenderHosts | undefined;

export const loadedRenderHosts = (): RenderHosts | undefined => loaded;

/** Called by custom-hosts.ts as it loads. */
export function setRenderHosts(render: RenderHosts): void {
  loaded = render;
}
