// Custom rendering's light-DOM hosts (renderMessage and the finer hooks): only pages that render
// messages their own way need this, so the ES build loads it (a chunk of its own) once a hook is
// set; the script-tag file has it at once (src/script-tag.ts).
import type { NotifMessage } from '../notif-message/notif-message.component.ts';
import { hook, setRenderHosts, type Host, type RenderHostsOptions } from './custom-rendering.ts';

/** A row element of the feed, with its custom pieces' slots as last written (a property: no attribute written per row). */
type Row = NotifMessage & { slots?: string };

/**
 * Gives every shown row of the feed its custom pieces' slots and hosts (children of `outer`),
 * rendered with the current message (cleaned up and rendered again, into a new host, when the
 * message or the renderer changed); cleans up and removes the hosts of rows that went (`gone`: all
 * of them). Returns the hosts by slot name.
 */
export function renderHosts({ feed, outer, previous, pieces, declined, gone }: RenderHostsOptions): Map<string, Host> {
  const hosts = new Map<string, Host>();
  let moved = false;
  if (!gone) {
    for (const row of feed.renderRoot.querySelectorAll<Row>('notif-message')) {
      const message = row.message!;
      // The row's slots for the custom pieces, each forwarding the host of that piece; a row element
      // shows another message as the list scrolls. (What they are for is kept on the element, not in
      // an attribute: no attribute to write for every row shown.)
      const slotNames = pieces(row.custom).map((piece) => piece.toLowerCase());
      const slotsKey = slotNames + message._id;
      if (row.slots != slotsKey) {
        row.slots = slotsKey;
        row.replaceChildren(...slotNames.map((name) => Object.assign(document.createElement('slot'), { name: `notif-${name}-${message._id}`, slot: name })));
      }
      for (const piece of pieces(row.custom)) {
        const name = `notif-${piece.toLowerCase()}-${message._id}`;
        const renderer = hook(outer, piece)!;
        let host = previous.get(name);
        previous.delete(name);
        if (host?.message != message || host.renderer != renderer) {
          // A fresh host each time: what the app rendered into the old one stays the app's to tear
          // down (a React portal or a Vue teleport does so after the cleanup, asynchronously).
          host?.cleanup?.();
          host?.element.remove();
          const element = outer.appendChild(document.createElement('div'));
          element.slot = name;
          const result = renderer(element, message, row.actions);
          // Declined: the built-in piece shows (for the whole row: that row alone renders again,
          // built in and with no slot for it, and the feed renders it so from now on).
          if (result === false) {
            element.remove();
            if (row.custom) {
              declined.add(message);
              row.custom = false;
              row.slots = message._id;
              row.replaceChildren();
            }
          }
          host = { element, message, renderer, cleanup: result || undefined };
          moved = true;
        }
        hosts.set(name, host);
      }
    }
  }
  for (const { element, cleanup } of previous.values()) {
    cleanup?.();
    element.remove();
    moved = true;
  }
  // The bell forwards its hosts' slots to this feed (a feed that went needs them no more).
  if (moved && !gone && outer != feed) outer.requestUpdate();
  return hosts;
}

setRenderHosts(renderHosts);
