import { useCallback, useEffect, useState } from 'react';
import { createPortal } from 'react-dom';
// Registers the elements and brings their JSX typings (attributes, properties, events).
import 'notif-inbox/react';
import type { Message, MessageActions, MessageRenderer, NotifMessageClickDetail } from 'notif-inbox/react';

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

/** The app's own card for one kind of message (notes), with the inbox's actions. */
function NoteCard({ message, actions }: { message: Message; actions: MessageActions }) {
  return (
    <article className="note-card" data-testid="note-card">
      <strong>{message.subject}</strong>
      <span>{typeof message.content === 'string' ? message.content : message.content?.map((b) => b.content).join(' ')}</span>
      <span className="note-actions">
        <button type="button" onClick={() => void actions.open()}>
          Open note
        </button>
        <button type="button" onClick={() => void (message.read ? actions.markUnread() : actions.markRead())}>
          {message.read ? 'Mark unread' : 'Mark read'}
        </button>
      </span>
    </article>
  );
}

interface Row {
  message: Message;
  actions: MessageActions;
}

/**
 * Notes render as the app's own <NoteCard>, through a React portal into the row's host (so they
 * share the app's context); every other message keeps the inbox's own row (`return false`).
 */
function useNoteRows(): [MessageRenderer, Map<HTMLElement, Row>] {
  const [rows, setRows] = useState(() => new Map<HTMLElement, Row>());
  const render = useCallback<MessageRenderer>((host, message, actions) => {
    if (message.templateIdentifier !== 'example-note') return false;
    setRows((r) => new Map(r).set(host, { message, actions }));
    return () =>
      setRows((r) => {
        const next = new Map(r);
        next.delete(host);
        return next;
      });
  }, []);
  return [render, rows];
}

export function App({ config }: { config: ExampleConfig }) {
  const [path, navigate] = usePath();
  const [unseen, setUnseen] = useState<number | null>(null);
  const [renderNote, noteRows] = useNoteRows();

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
          renderMessage={renderNote}
          onnotif-message-click={onMessageClick}
          onnotif-unseen-count-change={(e) => setUnseen(e.detail.count)}
        />
      </header>
      {[...noteRows].map(([host, row]) => createPortal(<NoteCard {...row} />, host, row.message._id))}
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
            <p>Open the bell: the badge, the popover, mark all read, the buttons of an invitation, a note in the app's own card, and your preferences.</p>
          </>
        )}
      </main>
    </>
  );
}
