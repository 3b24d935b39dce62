// A Server-Sent Events parser as the HTML standard reads an event stream: the text in any pieces,
// lines ending at CRLF, LF or CR (not at U+2028 or U+2029), `data:` lines joined by a line feed into
// one event at the blank line that ends it, `id:` kept from event to event, `retry:` in digits only,
// comments (`:`) and unknown fields ignored. Pure: no DOM, no timers, no network.

/** What a piece of the stream completed: an event, or the server's reconnection time. */
export type SseItem =
  | {
      type: 'event';
      /** The event's name (`event:`), `message` when it has none. */
      event: string;
      /** Its `data:` lines, joined by a line feed. */
      data: string;
      /** The last event id the stream set (`id:`), if any. */
      id?: string;
    }
  | { type: 'retry'; milliseconds: number };

/** A line end: CRLF, LF, or a CR that is not the last character (it may be the first half of a CRLF still on its way). */
const LINE_END = /\r\n|\n|\r(?!$)/;

export class SseLineParser {
  /** The text after the last complete line. */
  #rest = '';
  #dataLines: string[] = [];
  #eventName = '';
  #lastEventId?: string;

  /** Reads the next piece of the stream's text; returns the events (and retries) it completed, in order. */
  push(text: string): SseItem[] {
    const lines = (this.#rest + text).split(LINE_END);
    this.#rest = lines.pop()!;
    const items: SseItem[] = [];
    for (const line of lines) this.#readLine(line, items);
    return items;
  }

  #readLine(line: string, items: SseItem[]) {
    if (line === '') {
      this.#dispatch(items);
      return;
    }
    if (line.startsWith(':')) return; // a comment (the service's heartbeat)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.#dataLines.push(value);
        break;
      case 'event':
        this.#eventName = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) items.push({ type: 'retry', milliseconds: Number(value) });
        break;
    }
  }

  /** The blank line: the event so far, if it has data, is complete. */
  #dispatch(items: SseItem[]) {
    const dataLines = this.#dataLines;
    const event = this.#eventName || 'message';
    this.#dataLines = [];
    this.#eventName = '';
    if (!dataLines.length) return;
    items.push({ type: 'event', event, data: dataLines.join('\n'), id: this.#lastEventId });
  }
}
