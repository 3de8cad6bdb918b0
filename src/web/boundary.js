// Generated from src/boundary.rs by `npm run boundary`; tests/boundary.rs fails when it is out of date.
// Do not edit: the Rust enums are the one source of these numbers, and the bundler inlines them.

// The codes of the shell's entry point, input(handle, code, a, b, c): inputs, then questions.
export const I_OPENED = 0;
export const I_FAILED = 1;
export const I_TIMER = 2;
export const I_WAKE = 3;
export const I_HIDDEN = 4;
export const I_RESTORED = 5;
export const I_PAUSE = 6;
export const I_ONLINE = 7;
export const I_OFFLINE = 8;
export const I_HINT = 9;
export const I_RETRY_NOW = 10;
export const I_CLOSE = 11;
export const I_WATCHDOG = 12;
export const I_PROBED = 13;
export const I_REFUSED = 14;
export const I_URL = 15;
export const I_RETRY_FIELD = 16;
export const I_UNUSABLE = 17;
export const I_ENDED = 18;
export const I_ANNOUNCED = 19;
export const I_STATUS = 20;
export const I_READY_STATE = 21;
export const I_ATTEMPT = 22;
export const I_LIVE = 23;
export const I_CLOSED = 24;
export const I_FIRST_QUESTION = 20;

// What the shell tells notify(link, note, a, b, c).
export const N_STATUS = 0;
export const N_OPEN = 1;
export const N_ERROR = 2;
export const N_RETRY = 3;
export const N_GIVE_UP = 4;
export const N_ID_DROPPED = 5;
export const N_UNAUTHORIZED = 6;
export const N_STALLS_RECUR = 7;
export const N_TRACE = 8;

// The trace: its steps' kinds (in a N_TRACE's first number), and the names of their types, of what
// starts an attempt, of why one ends and of what sets a delay's size, by number.
export const T_ATTEMPT = 0;
export const T_OPEN = 1;
export const T_ENDED = 2;
export const T_PROBE = 3;
export const T_PROBED = 4;
export const T_WAIT = 5;
export const T_OFFLINE = 6;
export const T_ASLEEP = 7;
export const T_GAVE_UP = 8;
export const T_CLOSED = 9;
export const TRACE_TYPES = ['attempt', 'open', 'ended', 'probe', 'probed', 'wait', 'offline', 'asleep', 'giveup', 'closed'];
export const TRIGGERS = ['start', 'timer', 'reconnectNow', 'visible', 'online', 'restored', 'browser'];
export const CAUSES = ['error', 'status', 'notAStream', 'stalled', 'timeout', 'unusable', 'serverEnded'];
export const BOUNDS = ['ladder', 'maxMs', 'retry', 'retryAfter', 'hint', 'maxHintMs'];

// The statuses, by index.
export const STATUSES = ['connecting', 'open', 'reconnecting', 'failed', 'closed'];
export const S_CONNECTING = 0;
export const S_OPEN = 1;
export const S_RECONNECTING = 2;
export const S_FAILED = 3;
export const S_CLOSED = 4;

// The options the shell reads, at their positions: name, what the JavaScript half checks (a type,
// the values it may take, or 'probe'), and the classes that have it (1 stream, 2 socket).
export const OPTIONS = [
  ['withCredentials', 'boolean', 1],
  ['reconnect', ['backoff', 'browser', false, true], 1],
  ['jitter', ['full', 'equal', 'decorrelated', 'none'], 3],
  ['baseMs', 'number', 3],
  ['maxMs', 'number', 3],
  ['factor', 'number', 3],
  ['maxAttempts', 'number', 3],
  ['reconnectOnVisible', 'boolean', 3],
  ['reconnectOnOnline', 'boolean', 3],
  ['maxHintMs', 'number', 1],
  ['probe', 'probe', 1],
  ['stallTimeoutMs', 'number', 3],
  ['minUptimeMs', 'number', 3],
  ['connectTimeoutMs', 'number', 3],
  ['pauseWhenHiddenMs', 'number', 3],
  ['lastEventIdParam', 'string', 1],
  ['retryHintEvent', 'string', 1],
  ['heartbeatEvent', 'string', 1],
];
export const O_WITH_CREDENTIALS = 0;
export const O_RECONNECT = 1;
export const O_JITTER = 2;
export const O_BASE_MS = 3;
export const O_MAX_MS = 4;
export const O_FACTOR = 5;
export const O_MAX_ATTEMPTS = 6;
export const O_RECONNECT_ON_VISIBLE = 7;
export const O_RECONNECT_ON_ONLINE = 8;
export const O_MAX_HINT_MS = 9;
export const O_PROBE = 10;
export const O_STALL_TIMEOUT_MS = 11;
export const O_MIN_UPTIME_MS = 12;
export const O_CONNECT_TIMEOUT_MS = 13;
export const O_PAUSE_WHEN_HIDDEN_MS = 14;
export const O_LAST_EVENT_ID_PARAM = 15;
export const O_RETRY_HINT_EVENT = 16;
export const O_HEARTBEAT_EVENT = 17;

// What follows the options in the values.
export const V_PROBE_URL = 18;
export const V_GIVEN = 19;
export const V_RESUME_FROM = 20;
export const V_TRANSPORT = 21;
export const V_TRACE = 22;
export const V_COUNT = 23;

// The code units of a string the option check's module keeps (src/check.rs).
export const CHECK_UNITS = 16;
