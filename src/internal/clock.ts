import type { ReactiveController, ReactiveControllerHost } from 'lit';

// One timer for every relative time on the page, not one per message.
const hosts = new Set<ReactiveControllerHost>();
let timer: ReturnType<typeof setInterval> | undefined;
const TICK_MS = 30_000;

function tick() {
  for (const host of hosts) host.requestUpdate();
}

/** Re-renders its host every 30 s while connected, so relative times stay true. */
export class ClockController implements ReactiveController {
  constructor(private host: ReactiveControllerHost) {
    host.addController(this);
  }

  hostConnected() {
    hosts.add(this.host);
    timer ??= setInterval(tick, TICK_MS);
  }

  hostDisconnected() {
    hosts.delete(this.host);
    if (hosts.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  get now(): number {
    return Date.now();
  }
}
