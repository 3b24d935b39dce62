import { useEffect, useState } from 'react';
// Registers the elements and brings their JSX typings (attributes, properties, events).
import 'notif-inbox/react';
import type { NotifMessageClickDetail } from 'notif-inbox/react';

export interface ExampleConfig {
  baseUrl: string;
  /** Development only: a secret. In production, use a proxy and `fetch` (see the README). */
  apiKey: string;
  subscriberId: string;
}

/** The app's router: the path, and navigation without a reload. */
function usePath(): [string, (to: string) => void] {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  const navigate = (to: string) => {
    history.pushState(null, '', to);
    setPath(new URL(to, location.href).pathname);
  };
  return [path, navigate];
}

export function App({ config }: { config: ExampleConfig }) {
  const [path, navigate] = usePath();
  const [unseen, setUnseen] = useState<number | null>(null);

  // The message's own link would load a new page: route inside the app instead.
  const onMessageClick = (event: CustomEvent<NotifMessageClickDetail>) => {
    const url = event.detail.url;
    if (url && new URL(url, location.href).origin === location.origin) {
      event.preventDefault();
      navigate(url);
    }
  };

  return (
    <>
      <header className="bar">
        <a href="/" className="brand" onClick={(e) => (e.preventDefault(), navigate('/'))}>
          React example
        </a>
        <span className="status" data-testid="unseen">
          {unseen === null ? '' : `${unseen} unseen`}
        </span>
        <notif-bell
          base-url={config.baseUrl}
          subscriberId={config.subscriberId}
          apiKey={config.apiKey}
          poll-interval={5000}
          onnotif-message-click={onMessageClick}
          onnotif-unseen-count-change={(e) => setUnseen(e.detail.count)}
        />
      </header>
      <main className="page" data-testid="route">
        {path.startsWith('/projects/') ? (
          <>
            <h1>Project {path.split('/')[2]}</h1>
            <p>Routed by the app from a notification, without a page load.</p>
          </>
        ) : path.startsWith('/notes/') ? (
          <h1>Note {path.split('/')[2]}</h1>
        ) : (
          <>
            <h1>Home</h1>
            <p>Open the bell: the badge, the popover, mark all read, the buttons of an invitation.</p>
          </>
        )}
      </main>
    </>
  );
}
