// The engine's settings: one set per process, whatever the number of apps and schedulers in it.
// The command line (main.ts) sets them once at start from the configuration (config.ts); a host app
// that runs the engine in its own process may call configureEngine itself. Nothing here reads the
// environment.

export interface EngineSettings {
  /** How long a process holds the jobs it is running before another may take them over (lease.ts). */
  runLeaseMs: number;
  /** Test-only: the boundaries at which the process kills itself (lease.ts, crashPoint). */
  crashPoints: readonly string[];
  /** Let chat webhooks reach loopback, private and metadata addresses (webhook.ts): development only. */
  allowPrivateWebhooks: boolean;
  /** The least time ahead a snooze may end (inbox/family.ts); tests shorten it. */
  snoozeMinMs: number;
  /** The byte budget of one trigger: payload and overrides x recipients x steps (trigger.ts); past it, 422. */
  maxTriggerBytes: number;
}

/** A snooze's least length when nothing else is set: a minute, as Novu's. */
export const DEFAULT_SNOOZE_MIN_MS = 60_000;

/** A run's lease when nothing else is set: long enough for any step, short enough to resume soon. */
export const DEFAULT_RUN_LEASE_MS = 60_000;

/**
 * A trigger's byte budget when nothing else is set: 256 MiB, so 2 KB to 10,000 recipients through
 * 5 steps (100 MB) or 100 KB to 100 recipients through 20 steps (200 MB) run, and 1 MB to 100
 * recipients through 5 steps (500 MB) is refused.
 */
export const DEFAULT_MAX_TRIGGER_BYTES = 256 * 1024 * 1024;

const current: EngineSettings = {
  runLeaseMs: DEFAULT_RUN_LEASE_MS,
  crashPoints: [],
  allowPrivateWebhooks: false,
  snoozeMinMs: DEFAULT_SNOOZE_MIN_MS,
  maxTriggerBytes: DEFAULT_MAX_TRIGGER_BYTES,
};

/** Changes the settings given; the others keep their value. */
export function configureEngine(settings: Partial<EngineSettings>): void {
  Object.assign(current, settings);
}

/** The settings in force. */
export function engineSettings(): Readonly<EngineSettings> {
  return current;
}
