// React 19 JSX with the elements: attributes, properties and events type-check (src/react.ts).
import { useRef } from 'react';
import type { NotifBell, NotifMessageClickDetail } from '../../src/react.ts';

export function Inbox({ subscriberId, signedFetch }: { subscriberId: string; signedFetch: typeof fetch }) {
  const bell = useRef<NotifBell>(null);
  const onClick = (event: CustomEvent<NotifMessageClickDetail>) => {
    if (event.detail.url) event.preventDefault();
  };
  return (
    <>
      <notif-bell
        ref={bell}
        base-url="https://api.example.com"
        subscriberId={subscriberId}
        fetch={signedFetch}
        poll-interval={30000}
        theme="dark"
        no-auto-seen
        className="inbox"
        onnotif-message-click={onClick}
        onnotif-action={(e) => console.log(e.detail.button, e.detail.status, e.detail.message._id)}
        onnotif-unseen-count-change={(e) => console.log(e.detail.count.toFixed(0))}
        onnotif-error={(e) => console.log(e.detail.action, e.detail.error.message)}
      />
      <notif-feed baseUrl="/notif" subscriber-id={subscriberId} embedded payload={{ project: 'x' }} locale="de" />
      <notif-message message={undefined} theme="auto" />

      {/* @ts-expect-error theme is 'light' | 'dark' | 'auto' */}
      <notif-bell theme="blue" />
      {/* @ts-expect-error pollInterval is a number */}
      <notif-bell pollInterval="soon" />
      {/* @ts-expect-error the detail of notif-action has no href (its link is url) */}
      <notif-bell onnotif-action={(e) => e.detail.href} />
      {/* @ts-expect-error not an attribute or property of the element */}
      <notif-feed subscriber="x" />
      {/* @ts-expect-error methods are not props */}
      <notif-bell show={() => undefined} />
    </>
  );
}
