// `notif-inbox/react`: the package (it registers the elements) plus React 19 JSX typings, so that
//   <notif-bell base-url="..." subscriberId={id} onnotif-message-click={(e) => e.detail.url} />
// type-checks. React 19 sets a prop as a property when the element has one (`subscriberId`,
// `fetch`, `store`), as an attribute otherwise (`base-url`), and listens to `on<event-name>`.
//   import 'notif-inbox/react';          // in the app's entry (or: import type {} from 'notif-inbox/react')
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { NotifEventDetails } from './events.ts';
import type { ElementProperties, NotifElements } from './types/elements.ts';

export * from './index.ts';

/** `onnotif-message-click` and the other events, each with its typed CustomEvent. */
export type NotifReactEvents = {
  [K in keyof NotifEventDetails as `on${K}`]?: (event: CustomEvent<NotifEventDetails[K]>) => void;
};

/**
 * The JSX props of `<tag>`: its properties, its attributes (where a property has the same name, as
 * `payload` does, the property's type: React sets it as a property), the notif events, and React's
 * HTML props.
 */
export type NotifReactProps<Tag extends keyof NotifElements> = ElementProperties<NotifElements[Tag]['element']> &
  Omit<NotifElements[Tag]['attributes'], keyof ElementProperties<NotifElements[Tag]['element']>> &
  NotifReactEvents &
  Omit<
    DetailedHTMLProps<HTMLAttributes<NotifElements[Tag]['element']>, NotifElements[Tag]['element']>,
    keyof ElementProperties<NotifElements[Tag]['element']> | keyof NotifElements[Tag]['attributes']
  >;

declare module 'react' {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace JSX {
    interface IntrinsicElements {
      'notif-bell': NotifReactProps<'notif-bell'>;
      'notif-feed': NotifReactProps<'notif-feed'>;
      'notif-message': NotifReactProps<'notif-message'>;
      'notif-preferences': NotifReactProps<'notif-preferences'>;
    }
  }
}
