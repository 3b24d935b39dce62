// Custom rendering's light-DOM hosts (renderMessage and the finer hooks): only pages that render
// messages their own way need this, so the ES build loads it (a chunk of its own) once a hook is
// set; the script-tag file has it at once (src/script-tag.ts).
import type { Message } from '../../api/types.ts';
import type { Hook, InboxElement } from '../../internal/inbox-element.ts';
import type { NotifMessage } from '../notif-message/notif-message.component.ts';
import { hook, setRenderHosts, type Host } from './notif-feed.component.ts';

/**
 * Gives every shown row of `feed` its custom pieces' slots and hosts (children of `outer`, the feed or the
 * bell around it), rendered with the current message (cleaned up and rendered again, into a new host,
 * when the message or the renderer changed); cleans up and removes the hosts of rows that went
 * (`gone`: all of them). Returns the hosts by slot name.
 */
export function renderHosts(
  feed: HTMLElement & { renderRoot: HTMLElement | DocumentFragment },
  outer: InboxElement,
  old: Map<string, Host>,
  pieces: (custom: boolean) => Hook[],
  declined: WeakSet<Message>,
  gone?: boolean,
): Map<string, Host> {
  const hosts = new Map<string, Host>();
  let moved = false;
  if (!gone) {
    for (const row of feed.renderRoot.querySelectorAll<NotifMessage & { slots?: string }>('notif-message')) {
      const m = row.message!;
      // The row's slots for the custom pieces, each forwarding the host of that piece; a row element
      // shows another message as the list scrolls. (What they are for is kept on the element, not in
      // an attribute: no attribute to write for every row shown.)
      const slots = pieces(row.custom).map((h) => h.toLowerCase());
      if (row.slots != slots + m._id) {
        row.slots = slots + m._id;
        row.replaceChildren(...slots.map((h) => Object.assign(document.createElement('slot'), { name: `notif-${h}-${m._id}`, slot: h })));
      }
      for (const h of pieces(row.custom)) {
        const name = `notif-${h.toLowerCase()}-${m._id}`;
        const fn = hook(outer, h)!;
        let host = old.get(name);
        old.delete(name);
        if (host?.[1] != m || host[2] != fn) {
          // A fresh host each time: what the app rendered into the old one stays the app's to tear
          // down (a React portal or a Vue teleport does so after the cleanup, asynchronously).
          host?.[3]?.();
          host?.[0].remove();
          const el = outer.appendChild(document.createElement('div'));
          el.slot = name;
          const done = fn(el, m, row.actions);
          // Declined: the built-in piece shows (for the whole row: that row alone renders again,
          // built in and with no slot for it, and the feed renders it so from now on).
          if (done === false) {
            el.remove();
            if (row.custom) declined.add(m), (row.custom = false), (row.slots = m._id), row.replaceChildren();
          }
          host = [el, m, fn, done || undefined];
          moved = true;
        }
        hosts.set(name, host);
      }
    }
  }
  for (const [el, , , done] of old.values()) {
    done?.();
    el.remove();
    moved = true;
  }
  // The bell forwards its hosts' slots to this feed (a feed that went needs them no more).
  if (moved && !gone && outer != feed) outer.requestUpdate();
  return hosts;
}

setRenderHosts(renderHosts);
