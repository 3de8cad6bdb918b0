// The event log's Redis store: one Redis Stream per log and one per topic (XADD to append, XRANGE to replay,
// a blocking XREAD to follow), so that every node of a fleet replays and serves what any node appended. The client library,
// node-redis (the npm package `redis`), is an optional peer dependency: this file imports it only when
// createRedisStore is called, so managed-eventsource/server loads without it.
//
// What must stay true:
// - Appends and reads are each one Lua script (one round trip, atomic): the bounds are applied and the last
//   id trimmed away is recorded (the floor string) in the same step, so a read always knows whether it can
//   vouch for an id (log.js, `vouches`). The two keys a script touches share a hash slot (`events` and
//   `{events}:floor`; a topic's `events:{room}` and `events:{room}:floor`), so a Redis Cluster takes them.
// - One command connection serves every stream; each stream's feed (the store's own, and each topic a log
//   has open) blocks on a connection of its own, closed when the log lets the topic go.
// - Commands never queue while Redis is down (`disableOfflineQueue`): an append or a read fails at once
//   with a StoreUnavailableError, and the log serves live events without it meanwhile.
// - No command waits more than `commandTimeoutMs` for a Redis that is connected and answers nothing (a
//   partition, a pause): a read then fails as unavailable (it is safe to ask again), and an append rejects
//   with code STORE_TIMEOUT and is not sent live, since Redis may still have stored it (the feed then
//   delivers it, once). close() does not wait for such a Redis either.
// - Both connections reconnect on the package's ladder, full jitter: attempt n waits a uniform draw in
//   [0, min(maxMs, baseMs * factor^(n-1))].
// - The feed is continuous: after an outage it goes on from the last id it delivered, unless the stream no
//   longer vouches for that id (Redis lost its data), in which case the log's window is reset, the feed
//   delivers the new stream from its start, and a gap marker is appended (as soon as the command connection
//   is back), so no client is left with a silent gap. The check runs on the feed's own connection, every
//   time it comes back, whichever of the two connections reconnects first.

import { describe, finite, range } from './common.js';
import { StoreUnavailableError, compareIds, newEpoch, timeOf, tooOld, topicName, vouches } from './ids.js';

const PREFIX = 'managed-eventsource/server';
/** How long past its age bound a stream's keys live after its last append (see keysLiveMs). */
const KEYS_MARGIN_MS = 70_000;
/** How much longer a stream's generation key lives than its stream and floor: while it is there, a stream
 * gone is one that expired (nothing lost), not one Redis lost (its generation went with it). */
const GENERATION_MARGIN_MS = 86_400_000;
/** A feed's connection attempts failed in a row, while the command connection is up, that make it refused. */
const FOLLOWER_REFUSALS = 3;

/** The ladder's full-jitter delay before attempt `attempt` (1, 2, ...): uniform in [0, cap(attempt)], with
 * cap(n) = min(maxMs, baseMs * factor^(n-1)). */
export function ladderDelay(attempt, { baseMs = 500, maxMs = 10_000, factor = 2 } = {}, random = Math.random) {
  range('attempt', attempt, 1);
  const cap = Math.min(maxMs, baseMs * factor ** (attempt - 1));
  return random() * cap;
}

// Lua, shared by both scripts: drops the entries older than the age cutoff `cutoff` (an id), keeping the
// newest dropped id as the floor, so a reader can tell a gap from an empty log. The floor expires with its
// stream (see APPEND), never after it.
const TRIM_BY_AGE = `
local function trimByAge(key, floorKey, cutoff)
  local old = redis.call('XREVRANGE', key, '(' .. cutoff, '-', 'COUNT', 1)
  if #old > 0 then
    redis.call('SET', floorKey, old[1][1])
    redis.call('XTRIM', key, 'MINID', cutoff)
    local ttl = redis.call('PTTL', key)
    if ttl > 0 then redis.call('PEXPIRE', floorKey, ttl) end
  end
end`;

// KEYS: the stream, its floor, its generation. ARGV: id ('*' or given), max length ('0': none), age cutoff
// ('': none), a new generation's mark (kept if the stream has none yet), how long the stream and its floor
// live after this append, ms ('': for ever), how long its generation lives (longer), then the entry's
// fields. With an age bound a stream no one appends to holds nothing to replay once it passes, so its keys
// go then: a topic used once (a user's, a room's) does not stay in Redis for ever. Returns { id, generation };
// each entry carries its generation (field 'p').
const APPEND = `${TRIM_BY_AGE}
local key, floorKey = KEYS[1], KEYS[2]
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[4]
  redis.call('SET', KEYS[3], epoch)
end
local id = redis.call('XADD', key, ARGV[1], 'p', epoch, unpack(ARGV, 7))
local maxlen = tonumber(ARGV[2])
if maxlen > 0 then
  local excess = redis.call('XLEN', key) - maxlen
  if excess > 0 then
    local old = redis.call('XRANGE', key, '-', '+', 'COUNT', excess)
    redis.call('SET', floorKey, old[#old][1])
    redis.call('XTRIM', key, 'MAXLEN', maxlen)
  end
end
if ARGV[3] ~= '' then trimByAge(key, floorKey, ARGV[3]) end
if ARGV[5] ~= '' then
  redis.call('PEXPIRE', key, ARGV[5])
  redis.call('PEXPIRE', floorKey, ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
return {id, epoch}`;

// KEYS as APPEND's. ARGV: after (an id), limit (0: where the log stands only), age cutoff ('': none).
// Returns { floor, first, head, entries, generation }, '' for none.
const READ = `${TRIM_BY_AGE}
local key, floorKey = KEYS[1], KEYS[2]
if ARGV[3] ~= '' and redis.call('EXISTS', key) == 1 then trimByAge(key, floorKey, ARGV[3]) end
local floor = redis.call('GET', floorKey)
local head, first = '', ''
if redis.call('EXISTS', key) == 1 then
  local info = redis.call('XINFO', 'STREAM', key)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then head = info[i + 1] end
    if info[i] == 'first-entry' and info[i + 1] then first = info[i + 1][1] end
  end
end
local entries = {}
local limit = tonumber(ARGV[2])
if limit > 0 then entries = redis.call('XRANGE', key, '(' .. ARGV[1], '+', 'COUNT', limit + 1) end
return {floor or '', first, head, entries, redis.call('GET', KEYS[3]) or ''}`;

// Resumable streams (resumable.js), one per LLM answer: KEYS are its frames (a list, frame n at index n), its
// state (a hash: state running|done|failed, reason, cancel) and its lease (a key that lives leaseMs while its
// node renews it), all in the stream's hash slot; its channel (sharded pub/sub, the same slot) carries each
// frame as `<n> <frame>` and `end`.
// PUSH, ARGV: n, the frame, keepMs, leaseMs, the channel. Stores frame n only if the list holds n frames (no
// gap, none twice); returns the list's length after.
const RESUMABLE_PUSH = `
local held = redis.call('LLEN', KEYS[1])
if held ~= tonumber(ARGV[1]) then return held end
if held == 0 then
  redis.call('HSET', KEYS[2], 'state', 'running')
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SPUBLISH', ARGV[5], ARGV[1] .. ' ' .. ARGV[2])
return held + 1`;
// FINISH, ARGV: state, reason, keepMs, the channel.
const RESUMABLE_FINISH = `
redis.call('HSET', KEYS[2], 'state', ARGV[1], 'reason', ARGV[2])
redis.call('DEL', KEYS[3])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SPUBLISH', ARGV[4], 'end')
return 1`;
// RENEW, ARGV: leaseMs, keepMs. Returns 1 when a cancel was asked for (its message may have been missed), 2
// when Redis holds no such stream (it restarted without its data), else 0.
const RESUMABLE_RENEW = `
local state = redis.call('HGET', KEYS[2], 'state')
if not state then return 2 end
if state ~= 'running' then return 0 end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if redis.call('HGET', KEYS[2], 'cancel') then return 1 end
return 0`;
// READ, ARGV: the first frame wanted. Returns { state ('' when none), reason, lease held (0|1), frames }.
const RESUMABLE_READ = `
local state = redis.call('HMGET', KEYS[2], 'state', 'reason')
return {state[1] or '', state[2] or '', redis.call('EXISTS', KEYS[3]), redis.call('LRANGE', KEYS[1], ARGV[1], -1)}`;
// CANCEL, ARGV: the cancel channel. Returns 1 when the stream was running.
const RESUMABLE_CANCEL = `
if redis.call('HGET', KEYS[2], 'state') ~= 'running' then return 0 end
redis.call('HSET', KEYS[2], 'cancel', '1')
redis.call('SPUBLISH', ARGV[1], 'cancel')
return 1`;

/** The hash tag of a Redis key, as Redis Cluster reads it (what lies between the first `{` and the next `}`,
 * if that is not empty), or null: keys with the same tag are in the same slot. */
export function hashTag(key) {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : null;
}

/** A key beside stream `key` in its hash slot (its `floor`, its `epoch`): `<key>:<name>` when the key has a
 * tag, else `{<key>}:<name>` (a key with no tag is hashed whole, as the tag `{<key>}` is). */
function besideKey(key, name) {
  return hashTag(key) !== null ? `${key}:${name}` : `{${key}}:${name}`;
}

/** Topic `name`'s stream key: `<key>:{<name>}`, the name's `%`, `{` and `}` escaped, so that it is the tag. A
 * key that has a tag of its own keeps it (every topic then in one slot). */
export function topicKey(key, name) {
  return `${key}:{${name.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}}`;
}

/** The key a command is routed by in a Redis Cluster (undefined: any node). */
function routingKey(command) {
  if (command[0] === 'EVALSHA' || command[0] === 'EVAL') return command[3];
  if (command[0] === 'XREAD') return command[command.indexOf('STREAMS') + 1];
  return undefined;
}

/** A node-redis cluster seen as the one connection the store talks to: the same `sendCommand(command,
 * options)`, `isReady`, `duplicate()`, `connect()`, `close()`, `destroy()`, and 'ready' when the cluster's
 * slots are known. A node that fails fails the commands routed to it (each command still has its deadline),
 * and node-redis finds the slots again. */
function clusterConnection(cluster) {
  const event = (name) => (name === 'ready' ? 'connect' : name);
  const connection = {
    get isReady() {
      return cluster.isReady;
    },
    on(name, listener) {
      cluster.on(event(name), listener);
      return connection;
    },
    once(name, listener) {
      cluster.once(event(name), listener);
      return connection;
    },
    sendCommand: (command, options) => cluster.sendCommand(routingKey(command), false, command, options),
    sSubscribe: (channel, listener) => cluster.sSubscribe(channel, listener),
    sUnsubscribe: (channel, listener) => cluster.sUnsubscribe(channel, listener),
    duplicate: () => clusterConnection(cluster.duplicate()),
    connect: () => cluster.connect(),
    close: () => cluster.close(),
    destroy: () => cluster.destroy(),
  };
  return connection;
}

/** A stream entry as the log's record. */
function record([id, fields]) {
  const rec = { id, event: 'message', data: '', gap: false, at: timeOf(id), epoch: null };
  for (let i = 0; i < fields.length; i += 2) {
    const f = fields[i];
    if (f === 'd') rec.data = fields[i + 1];
    else if (f === 'e') rec.event = fields[i + 1];
    else if (f === 'g') rec.gap = true;
    else if (f === 'p') rec.epoch = fields[i + 1];
  }
  return rec;
}

/** XREAD's entries for `key`, whatever shape the protocol version gives the reply. */
function entriesOf(reply, key) {
  if (reply == null) return [];
  if (Array.isArray(reply)) return reply.find((r) => r[0] === key)?.[1] ?? [];
  if (reply instanceof Map) return reply.get(key) ?? [];
  return reply[key] ?? [];
}

/**
 * A store in a Redis Stream at `key` (default 'events'; the floor is kept at `{<key>}:floor`, or `<key>:floor`
 * when the key has a hash tag), with `topic(name)` for a topic's stream at `<key>:{<name>}`. Resolves once
 * node-redis is loaded and the first connection attempt has ended, either way, or after the socket's
 * `connectTimeout` (5 s) with no answer: if Redis is down or mute the store starts 'unavailable' and keeps
 * trying on the ladder. Rejects with an Error naming the package if `redis`
 * is not installed.
 *
 * Options: `url` (default redis://127.0.0.1:6379), `key`, `maxEvents` (10,000), `maxAgeMs` (one hour),
 * `reconnect: { baseMs: 500, maxMs: 10000, factor: 2 }`, `random`, `onreconnect({ attempt, delayMs })`,
 * `blockMs` (the follow read's wait, 5,000), `commandTimeoutMs` (how long a command may go unanswered,
 * 5,000), `clientOptions` (more node-redis options).
 */
export async function createRedisStore(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError(`${PREFIX}: createRedisStore takes an options object, not ${describe(options)}`);
  const redisUrl = (name, value) => {
    if (typeof value !== 'string' || !/^rediss?:\/\//.test(value) || !URL.canParse(value)) throw new TypeError(`${PREFIX}: ${name} must be a redis:// or rediss:// URL string, not ${describe(value)}`);
    return value;
  };
  const cluster = options.cluster ?? null;
  if (cluster !== null) {
    if (!Array.isArray(cluster) || cluster.length === 0) throw new TypeError(`${PREFIX}: cluster must be an array of the Redis Cluster's node URLs (some or all), not ${describe(cluster)}`);
    cluster.forEach((u, i) => redisUrl(`cluster[${i}]`, u));
    if (options.url !== undefined) throw new TypeError(`${PREFIX}: give url (one Redis) or cluster (a Redis Cluster's nodes), not both`);
  }
  // Where the store's errors say Redis is.
  const url = cluster !== null ? cluster.join(',') : redisUrl('url', options.url ?? 'redis://127.0.0.1:6379');
  const key = options.key ?? 'events';
  if (typeof key !== 'string' || key === '') throw new TypeError(`${PREFIX}: key must be a non-empty string, not ${describe(key)}`);
  if (key.includes('{') && hashTag(key) === null) throw new TypeError(`${PREFIX}: a key with a brace must hold a Redis Cluster hash tag, {tag} with something between the braces, not ${describe(key)}`);
  const maxEvents = range('maxEvents', options.maxEvents ?? 10_000, 1);
  if (maxEvents !== Infinity && !Number.isInteger(maxEvents)) throw new RangeError(`${PREFIX}: maxEvents must be a whole number, not ${maxEvents}`);
  const maxAgeMs = range('maxAgeMs', options.maxAgeMs ?? 3_600_000, 1);
  for (const name of ['reconnect', 'clientOptions']) {
    const value = options[name];
    if (value !== undefined && (value === null || typeof value !== 'object')) throw new TypeError(`${PREFIX}: ${name} must be an object, not ${describe(value)}`);
  }
  const ladder = { baseMs: 500, maxMs: 10_000, factor: 2, ...options.reconnect };
  finite('reconnect.baseMs', ladder.baseMs, 1);
  finite('reconnect.maxMs', ladder.maxMs, ladder.baseMs);
  finite('reconnect.factor', ladder.factor, 1);
  const blockMs = Math.round(finite('blockMs', options.blockMs ?? 5000, 1));
  const commandTimeoutMs = Math.round(finite('commandTimeoutMs', options.commandTimeoutMs ?? 5000, 1, 2 ** 31 - 1)); // a timer holds at most 2^31 - 1 ms
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new TypeError(`${PREFIX}: random must be a function like Math.random, not ${describe(random)}`);
  const onreconnect = options.onreconnect ?? null;
  if (onreconnect !== null && typeof onreconnect !== 'function') throw new TypeError(`${PREFIX}: onreconnect must be a function, not ${describe(onreconnect)}`);
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError(`${PREFIX}: now must be a function returning milliseconds, not ${describe(now)}`);
  const maxPendingAppends = range('maxPendingAppends', options.maxPendingAppends ?? 1000, 1);
  if (maxPendingAppends !== Infinity && !Number.isInteger(maxPendingAppends)) throw new RangeError(`${PREFIX}: maxPendingAppends must be a whole number, not ${maxPendingAppends}`);
  const maxPendingBytes = range('maxPendingBytes', options.maxPendingBytes ?? 1 << 20, 1);

  let redis;
  try {
    redis = await import('redis');
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' || error?.code === 'MODULE_NOT_FOUND') {
      throw new Error(`${PREFIX}: createRedisStore needs the npm package "redis" (node-redis 6), an optional peer dependency of managed-eventsource: npm install redis`, { cause: error });
    }
    throw error;
  }

  // node:crypto only here, with node-redis: the module itself stays loadable in Web runtimes.
  const { createHash } = await import('node:crypto');
  const sha1 = (text) => createHash('sha1').update(text).digest('hex');
  const APPEND_SHA = sha1(APPEND);
  const READ_SHA = sha1(READ);
  const RESUMABLE_SHAS = new Map([RESUMABLE_PUSH, RESUMABLE_FINISH, RESUMABLE_RENEW, RESUMABLE_READ, RESUMABLE_CANCEL].map((body) => [body, sha1(body)]));
  const reconnectStrategy = (retries) => {
    const attempt = retries + 1;
    const delayMs = Math.round(ladderDelay(attempt, ladder, random));
    onreconnect?.({ attempt, delayMs });
    return delayMs;
  };
  const nodeOptions = { ...options.clientOptions, disableOfflineQueue: true, socket: { ...options.clientOptions?.socket, reconnectStrategy } };
  const client = cluster !== null
    ? clusterConnection(redis.createCluster({ rootNodes: cluster.map((u) => ({ url: u })), defaults: nodeOptions, minimizeConnections: true }))
    : redis.createClient({ ...nodeOptions, url });
  let lastError = null;
  let closed = false;
  let everReady = false;
  let appendsWaiting = 0; // appends sent or queued and not answered yet, every stream's
  let bytesWaiting = 0;
  /** The streams open on this client: the store's own, and each topic a log has open. */
  const streams = new Set();

  const unavailable = (error) => new StoreUnavailableError(`${PREFIX}: Redis at ${url} is unavailable: ${error?.message ?? error}`, error);
  // node-redis emits 'error' before it fails the commands of the connection that failed, and marks the
  // connection not ready first. An 'error' while it is still ready (its own PING timing out behind the
  // appends, with clientOptions.pingInterval) fails nothing and is not an outage.
  client.on('error', (error) => {
    lastError = error;
    if (client.isReady) return;
    for (const s of streams) s.clientLost(error);
    connectionLost(client);
  });
  client.on('ready', () => {
    everReady = true;
    // Load the scripts first on this connection, so the EVALSHAs after them find them.
    for (const body of [APPEND, READ]) client.sendCommand(['SCRIPT', 'LOAD', body]).catch(() => {});
    for (const s of streams) s.clientBack();
  });

  // How long a stream's keys live after its last append: past its age bound and the 10 s a given id may be
  // ahead of the clock, with a minute's margin for clocks that differ between nodes ('': no age bound).
  // A bound past what Redis's expiry takes (2^53 ms, 285,000 years) is for ever too.
  const forever = maxAgeMs + KEYS_MARGIN_MS + GENERATION_MARGIN_MS > Number.MAX_SAFE_INTEGER;
  const keysLiveMs = forever ? '' : String(Math.ceil(maxAgeMs) + KEYS_MARGIN_MS);
  const generationLiveMs = forever ? '' : String(Math.ceil(maxAgeMs) + KEYS_MARGIN_MS + GENERATION_MARGIN_MS);
  // '' where nothing can be that old (no bound, or one that reaches back past the epoch).
  const cutoff = () => {
    const from = Math.floor(now() - maxAgeMs) + 1;
    return maxAgeMs === Infinity || from <= 0 ? '' : `${from}-0`;
  };

  // Every command on any connection has one deadline, the store's: node-redis's own queue timeout is off
  // for them (it would drop a command it has not written yet, behind the store's back). Each carries an
  // AbortSignal of its own, which node-redis honours only until it writes the command: aborting it then tells
  // a command never sent (rejected with AbortError, in the same task) from one sent (unaffected).
  const waiting = new Set(); // { connection, controller, lost } for each command not answered yet

  /** Aborts the commands `connection` has not written yet, as the connection fails: they were never sent. */
  function connectionLost(connection) {
    for (const pending of waiting) {
      if (pending.connection !== connection) continue;
      pending.lost = true;
      pending.controller.abort();
    }
  }

  /** `command` on `connection`, settled within commandTimeoutMs. Rejects with an error whose code says what
   * became of it: STORE_UNAVAILABLE (never sent: the connection was down or failed before writing it),
   * STORE_NOT_SENT (never sent: it waited commandTimeoutMs behind other commands), STORE_TIMEOUT (sent, and
   * not answered in time or before the connection failed: Redis may still carry it out). */
  function run(command, connection = client, deadlineMs = commandTimeoutMs) {
    if (!connection.isReady) return Promise.reject(unavailable(lastError ?? 'not connected'));
    const what = command[0] === 'EVALSHA' || command[0] === 'EVAL' ? 'a script' : command[0];
    const pending = { connection, controller: new AbortController(), lost: false };
    waiting.add(pending);
    return new Promise((resolve, reject) => {
      let timer;
      const settle = (fn, value) => {
        if (!waiting.delete(pending)) return;
        clearTimeout(timer);
        fn(value);
      };
      timer = setTimeout(() => {
        // Not written yet: node-redis drops it now and the rejection below says so, before setImmediate runs.
        pending.controller.abort();
        setImmediate(() => settle(reject, storeError('STORE_TIMEOUT', `Redis at ${url} did not answer ${what} within ${deadlineMs} ms (commandTimeoutMs${deadlineMs === commandTimeoutMs ? '' : ' after its block'}); it may still carry it out`)));
      }, deadlineMs);
      connection.sendCommand(command, { abortSignal: pending.controller.signal, timeout: 0 }).then(
        (reply) => settle(resolve, reply),
        (error) => {
          if (error instanceof redis.AbortError) {
            if (pending.lost) return settle(reject, unavailable(lastError ?? error));
            return settle(reject, storeError('STORE_NOT_SENT', `${what} waited ${commandTimeoutMs} ms (commandTimeoutMs) behind other commands to Redis at ${url} and was never sent: it was not carried out`));
          }
          if (error instanceof redis.ErrorReply) {
            if (/equal or smaller than the target stream top item/.test(error.message)) {
              return settle(reject, new RangeError(`${PREFIX}: a given id must be above the stream's last id (${error.message})`));
            }
            return settle(reject, error);
          }
          if (error instanceof redis.ClientOfflineError || error instanceof redis.ClientClosedError) return settle(reject, unavailable(error)); // refused before queueing
          if (error?.message === 'The queue is full') {
            return settle(reject, storeError('STORE_BUSY', `node-redis refused ${what} before sending it: its queue is full (clientOptions.commandsQueueMaxLength); it was not carried out`));
          }
          // Written, then the connection failed (or was closed) before the answer came.
          settle(reject, storeError('STORE_TIMEOUT', `the connection to Redis at ${url} ended before it answered ${what} (${error?.message ?? error}); it may still have carried it out`));
        },
      );
    });
  }
  const storeError = (code, message) => Object.assign(new Error(`${PREFIX}: ${message}`), { code });

  /** Script `body` (its digest `sha`) on `keys`, on `connection`, sent whole only when Redis does not have it
   * yet (after a restart). */
  async function evalScript(body, sha, keys, args, connection) {
    try {
      return await run(['EVALSHA', sha, String(keys.length), ...keys, ...args], connection);
    } catch (error) {
      if (!/NOSCRIPT/.test(error?.message)) throw error;
      return run(['EVAL', body, String(keys.length), ...keys, ...args], connection);
    }
  }

  /**
   * One stream of the store: the Redis Stream at `key` (its floor beside it, in the same hash slot), read and
   * appended on the shared command connection, and followed by a blocking XREAD on `follower`, a connection
   * of its own. The store's own stream, and one per topic a log has open.
   */
  function openStream(key) {
    /** The feed's connection, made by connectFollower (a topic's when the log opens it; none for a stream
     * used for one append), and its connect() under way. */
    let follower = null;
    let followerConnecting = null;
    const floorKey = besideKey(key, 'floor');
    const epochKey = besideKey(key, 'epoch');
    let epoch = null; // the stream's generation, as last seen (null: it has none yet)
    let consumer = null;
    let status = client.isReady ? 'ready' : 'connecting';
    let ended = false;
    let reads = 0;
    let lastSeen = null; // the last id the feed delivered (or the head when it started)
    let lastAgeTrim = -Infinity;

    function setStatus(next, error) {
      if (closed || ended || next === status) return;
      status = next;
      store.status = next;
      store.error = next === 'ready' ? null : error ?? null; // for a consumer that attaches later
      consumer?.status(next, error);
    }

    const script = (body, sha, args, connection) => evalScript(body, sha, [key, floorKey, epochKey], args, connection);

    /** Where the stream stands (and the entries after `after`, up to `limit`), on `connection`. */
    async function stand(after, limit, connection) {
      const [floor, first, head, entries, generation] = await script(READ, READ_SHA, [after, String(limit), cutoff()], connection);
      epoch = generation || null;
      return { floor: floor || null, first: first || null, head: head || null, entries, epoch };
    }

    // The gap marker after Redis lost data, appended as soon as the command connection can (it reconnects on
    // its own, maybe after the feed's).
    let gapMarkerPending = false;
    function appendGapMarker() {
      gapMarkerPending = false;
      store.append({ event: 'message', data: '', gap: true }).catch(() => {
        gapMarkerPending = true;
      });
    }

    /** The feed: a blocking XREAD on its own connection, from the last id delivered. Every time that connection
     * comes back, the feed first checks on it that the stream still vouches for lastSeen, until the check
     * has been made: it must not depend on the command connection being back too. */
    async function follow() {
      let checkPending = false;
      while (!closed && !ended) {
        if (!follower.isReady) {
          await new Promise((resolve) => {
            follower.once('ready', resolve);
            closing.then(resolve);
          });
          if (closed || ended) return;
          checkPending = true;
        }
        if (checkPending && lastSeen !== null && lastSeen !== '0-0') {
          try {
            const known = epoch;
            const s = await stand(lastSeen, 0, follower);
            // A stream and floor gone with its generation still there expired (see APPEND): every event was
            // past the age bound, and nothing is lost: no reload. Redis that lost its data lost the
            // generation too. The next event, in the same generation, comes after lastSeen.
            const expired = s.head === null && s.floor === null && s.epoch !== null && s.epoch === known;
            if (!expired && !vouches(lastSeen, s)) {
              // Everything the stream holds now was appended since it lost its data: the feed delivers it all.
              consumer?.reset(null);
              lastSeen = '0-0';
              appendGapMarker();
            }
            checkPending = false;
          } catch {
            if (closed || ended) return;
            if (follower.isReady) await new Promise((r) => setTimeout(r, 50));
            continue;
          }
        }
        checkPending = false;
        try {
          if (lastSeen === null) {
            const s = await stand('0-0', 0, follower);
            lastSeen = s.head ?? '0-0';
            consumer?.reset(s.head);
          }
          // Its deadline is its block plus commandTimeoutMs: a Redis that stopped answering is noticed.
          const reply = await run(['XREAD', 'COUNT', '1000', 'BLOCK', String(blockMs), 'STREAMS', key, lastSeen], follower, Math.min(2 ** 31 - 1, blockMs + commandTimeoutMs));
          if (feedFailures > 0) feedBack();
          for (const entry of entriesOf(reply, key)) {
            if (compareIds(entry[0], lastSeen) <= 0) continue;
            lastSeen = entry[0];
            const rec = record(entry);
            if (rec.epoch !== null) epoch = rec.epoch;
            consumer?.event(rec);
          }
        } catch (error) {
          if (closed || ended) return;
          // Refused (an ACL without @blocking, a proxy that refuses blocking commands) or not answered in time,
          // on a connection that is up: no live event reaches anyone, so the store says so, and tries again on
          // the ladder rather than every few milliseconds.
          if (follower.isReady) {
            feedFailed(error);
            await new Promise((r) => setTimeout(r, Math.max(50, ladderDelay(Math.min(feedFailures, 30), ladder, random))));
          }
        }
      }
    }

    /** The feed's failures in a row on a connection that was up (0: it delivers). While there are any the store
     * is 'unavailable': appends and replays work, live events do not flow. */
    let feedFailures = 0;
    /** The feed failed on a connection that was up (`because` says how, `advice` what to allow), or its own
     * connection cannot be made while commands go through (Redis's maxclients, a proxy's limit): no live
     * event reaches anyone. Ready again once its XREAD answers (feedBack). */
    function feedFailed(error, because = 'its blocking XREAD failed', advice = 'An ACL needs @blocking (+xread), and a proxy in front of Redis must allow blocking commands') {
      feedFailures++;
      const why = new StoreUnavailableError(`${PREFIX}: Redis at ${url} does not deliver live events of ${key}: ${because} (${error?.message ?? error}); appends and replays still work. ${advice}`, error);
      if (status === 'ready') setStatus('unavailable', why);
    }
    function feedBack() {
      feedFailures = 0;
      if (status === 'unavailable' && client.isReady) setStatus('ready');
    }

    let close;
    const closing = new Promise((resolve) => (close = resolve));

    const store = {
      kind: 'redis',
      status,
      /** How long a feed's read may take before it fails: every feed has failed by then if Redis is silent. */
      feedDeadlineMs: blockMs + commandTimeoutMs + 100,
      key,
      maxEvents,
      maxAgeMs,
      maxPendingAppends,
      maxPendingBytes,
      get reads() {
        return reads;
      },
      /** The last id the feed delivered. */
      get head() {
        return lastSeen === '0-0' ? null : lastSeen;
      },
      /** The stream's generation as last seen (null: none yet): a Redis that lost its data starts another. */
      get epoch() {
        return epoch;
      },
      get client() {
        return client;
      },
      async append(entry) {
        // Backpressure: past the bound, an append is refused at once, not queued to fail commandTimeoutMs later.
        // One append is always let through, however large; a gap marker always is (a client's reload rides on it).
        const bytes = entry.gap ? 0 : Buffer.byteLength(entry.data) + entry.event.length;
        if (!entry.gap && appendsWaiting > 0 && (appendsWaiting >= maxPendingAppends || bytesWaiting + bytes > maxPendingBytes)) {
          throw storeError('STORE_BUSY', `${appendsWaiting} appends (${bytesWaiting} bytes) are already waiting for Redis at ${url} (maxPendingAppends ${maxPendingAppends}, maxPendingBytes ${maxPendingBytes}): this one was not sent`);
        }
        const fields = entry.gap ? ['g', '1'] : entry.event === 'message' ? ['d', entry.data] : ['e', entry.event, 'd', entry.data];
        // The age bound is applied by every read, and by an append at most once a second (it costs a lookup).
        const t = now();
        const old = entry.id === undefined ? null : tooOld(entry.id, t, maxAgeMs);
        if (old) throw old;
        const age = t - lastAgeTrim >= 1000 ? cutoff() : '';
        if (age) lastAgeTrim = t;
        appendsWaiting++;
        bytesWaiting += bytes;
        try {
          const [id, generation] = await script(APPEND, APPEND_SHA, [entry.id ?? '*', maxEvents === Infinity ? '0' : String(maxEvents), age, newEpoch(), keysLiveMs, generationLiveMs, ...fields]);
          epoch = generation;
          return id;
        } finally {
          appendsWaiting--;
          bytesWaiting -= bytes;
        }
      },
      /** Appends sent or queued to Redis and not answered yet (every stream's), and their bytes. */
      get waiting() {
        return { appends: appendsWaiting, bytes: bytesWaiting };
      },
      async read(afterId, limit) {
        reads++;
        const s = await stand(afterId, limit);
        const complete = vouches(afterId, s);
        const events = complete ? s.entries.map(record) : [];
        const more = events.length > limit;
        if (more) events.length = limit;
        return { events, complete, more, head: s.head, epoch: s.epoch };
      },
      attach(log) {
        if (consumer) throw new Error(`${PREFIX}: a store belongs to one event log`);
        consumer = log;
        if (lastSeen !== null) log.reset(this.head);
      },
      /** Starts the feed, first reading where the stream stands (within `deadline`, a promise that rejects,
       * if given), unless `stand` is false. Resolves to whether it knows where the stream stands. */
      async start({ stand: look = true, deadline = null } = {}) {
        if (!follower) store.connectFollower();
        let known = false;
        if (look) {
          try {
            const s = await (deadline ? Promise.race([stand('0-0', 0), deadline]) : stand('0-0', 0));
            lastSeen = s.head ?? '0-0';
            known = true;
          } catch {}
        }
        if (!ended) follow();
        return known;
      },
      markUnavailable(error) {
        setStatus('unavailable', error);
      },
      /** The command connection failed, or came back (the client's own events, for every stream). */
      clientLost(error) {
        if (status === 'ready') setStatus('unavailable', error);
      },
      clientBack() {
        if (feedFailures === 0) setStatus('ready'); // while the feed still fails, the store still cannot deliver
        if (gapMarkerPending && !closed && !ended) appendGapMarker();
      },
      /** Makes the feed's connection and starts connecting it. From then on the stream hears the command
       * connection's failures and returns (`streams`) until it closes; a stream used only to append has no
       * feed and is never in that set, so it is let go with its last reference. */
      connectFollower() {
        streams.add(store);
        const f = (follower = client.duplicate());
        // Its attempts that failed in a row while the command connection was up: a drop it comes back from
        // is one or two; Redis down fails `client` too, which says so. FOLLOWER_REFUSALS of them is a
        // connection Redis refuses (maxclients, a proxy's limit): that the store says.
        let refusals = 0;
        f.on('error', (error) => {
          if (f.isReady) return;
          connectionLost(f); // its loop waits for 'ready'
          if (!client.isReady) refusals = 0;
          else if (++refusals === FOLLOWER_REFUSALS && !closed && !ended) feedFailed(error, "the feed's connection could not be made", 'Each topic open on a node holds a connection: see maxclients');
        });
        f.on('ready', () => (refusals = 0));
        followerConnecting = f.connect().catch(() => {});
      },
      /** Opens a topic's feed: its connection, and where its stream stands. Rejects (unavailable) when Redis
       * cannot be read now. */
      async open() {
        if (!client.isReady) throw unavailable(lastError ?? 'not connected');
        store.connectFollower();
        if (!(await store.start())) throw unavailable(lastError ?? `where the stream at ${key} stands could not be read`);
      },
      /** Ends this stream's feed and its follower connection (the command connection is the store's). */
      close() {
        if (ended) return;
        ended = true;
        streams.delete(store);
        status = store.status = 'closed';
        close();
        if (!follower) return;
        const f = follower;
        connectionLost(f);
        const destroy = () => {
          try {
            f.destroy();
          } catch {}
        };
        destroy();
        // node-redis may still finish a connect under way after destroy(): end it then too.
        followerConnecting?.then(destroy);
      },
    };
    return store;
  }

  /** Topic `name`'s stream (keys hash-tagged by the topic, so a Redis Cluster takes its scripts). Its feed
   * (a connection of its own) starts when the log opens the topic (`open()`), and ends with `close()`; a
   * stream used only to append has none. */
  function topic(name) {
    topicName(name);
    if (closed) throw new Error(`${PREFIX}: the store is closed`);
    return openStream(topicKey(key, name));
  }

  /**
   * What resumable streams (resumable.js) keep here: each stream's frames, state and lease under
   * `{<key>:resumable:<id>}` (one hash slot a stream), and sharded pub/sub on a connection of its own, made
   * when first needed. Every command has the store's deadline.
   */
  let subscriber = null;
  let subscriberConnecting = null;
  function resumable({ keepMs, leaseMs }) {
    const tag = (id) => `{${key}:resumable:${id}}`;
    // While a stream runs its keys outlive the next renewals whatever keepMs is: keepMs counts from its end.
    const runningMs = Math.max(keepMs, 2 * leaseMs);
    const run3 = (body, id, args) => {
      const t = tag(id);
      return evalScript(body, RESUMABLE_SHAS.get(body), [`${t}:frames`, `${t}:state`, `${t}:lease`], args);
    };
    /** Listens on `channel` (sharded pub/sub); resolves to a function that stops, once subscribed. */
    async function listen(channel, listener) {
      if (closed) throw new Error(`${PREFIX}: the store is closed`);
      if (!subscriber) {
        subscriber = client.duplicate();
        subscriber.on('error', () => {}); // it reconnects on the ladder; a stream's watch reads what it missed
        subscriberConnecting = subscriber.connect();
      }
      let timer;
      let late = false;
      const unsubscribe = () => void Promise.resolve(subscriber?.sUnsubscribe(channel, listener)).catch(() => {});
      const deadline = new Promise((_, reject) => (timer = setTimeout(reject, commandTimeoutMs, unavailable(`no subscription to ${channel} within ${commandTimeoutMs} ms (commandTimeoutMs)`))));
      const subscribing = subscriberConnecting.then(() => subscriber.sSubscribe(channel, listener));
      // One that lands after its deadline was given up: it is taken off again, not left hearing every frame.
      subscribing.then(() => late && unsubscribe(), () => {});
      try {
        await Promise.race([subscribing, deadline]);
      } catch (error) {
        late = true;
        throw error?.code ? error : unavailable(error);
      } finally {
        clearTimeout(timer);
      }
      return unsubscribe;
    }
    return {
      push: (id, n, text) => run3(RESUMABLE_PUSH, id, [String(n), text, String(runningMs), String(leaseMs), `${tag(id)}:live`]).then(Number),
      finish: (id, state, reason) => run3(RESUMABLE_FINISH, id, [state, reason, String(keepMs), `${tag(id)}:live`]),
      renew: (id) => run3(RESUMABLE_RENEW, id, [String(leaseMs), String(runningMs)]).then((r) => ['', 'cancel', 'lost'][Number(r)] ?? ''),
      async read(id, from) {
        const [state, reason, lease, frames] = await run3(RESUMABLE_READ, id, [String(from)]);
        return { state: state || null, reason, alive: Number(lease) === 1, frames };
      },
      cancel: (id) => run3(RESUMABLE_CANCEL, id, [`${tag(id)}:cancel`]).then((r) => Number(r) === 1),
      subscribe: (id, listener) => listen(`${tag(id)}:live`, listener),
      onCancel: (id, listener) => listen(`${tag(id)}:cancel`, listener),
    };
  }

  const store = openStream(key);
  store.connectFollower();
  const closeOwn = store.close;
  store.topic = topic;
  store.resumable = resumable;
  /** Closes every stream (each topic's feed) and the connections. */
  store.close = async () => {
    if (closed) return;
    closeOwn();
    for (const s of [...streams]) s.close();
    closed = true;
    if (subscriber) {
      try {
        subscriber.destroy();
      } catch {}
      subscriberConnecting?.then(() => subscriber.destroy()).catch(() => {});
    }
    // What the command connection has not written yet is refused as never sent, not failed as maybe stored.
    connectionLost(client);
    if (!client.isReady) {
      // One stuck in its handshake would hold close() for ever, and it has nothing to flush.
      try {
        client.destroy();
      } catch {}
      return;
    }
    // A Redis that answers nothing would hold close() (it waits for the replies due): commandTimeoutMs at most.
    let timer;
    const silence = new Promise((resolve) => (timer = setTimeout(resolve, commandTimeoutMs, 'silent')));
    const outcome = await Promise.race([client.close().catch(() => 'failed'), silence]);
    clearTimeout(timer);
    if (outcome) client.destroy();
  };

  // Both connections start now; the first attempt's outcome decides the starting status.
  const first = new Promise((resolve) => {
    client.once('ready', resolve);
    client.once('error', resolve);
  });
  const connecting = client.connect();
  if (cluster !== null) {
    // A cluster is found through its nodes once, here: with none answering there is no cluster to follow.
    try {
      await connecting;
    } catch (error) {
      await store.close();
      throw new StoreUnavailableError(`${PREFIX}: no node of the Redis Cluster (${url}) answered: ${error?.message ?? error}`, error);
    }
  } else connecting.catch(() => {});
  // An endpoint that accepts and never answers sends neither 'ready' nor 'error': the first attempt and the
  // first look at the stream get the socket's connectTimeout (node-redis's default, 5 s) in all, then the
  // store starts 'unavailable' and the connections go on trying.
  const startMs = options.clientOptions?.socket?.connectTimeout ?? 5000;
  let startTimer;
  const startExpired = new Promise((resolve) => {
    startTimer = setTimeout(resolve, startMs);
    startTimer.unref?.();
  });
  await Promise.race([first, startExpired]);
  if (!everReady) {
    store.markUnavailable(lastError ?? new Error(`no answer from ${url} within ${startMs} ms`));
    store.start({ stand: false });
  } else {
    // Know where the stream stands before the first connection asks.
    await store.start({ deadline: startExpired.then(() => Promise.reject(new Error('timed out'))) });
  }
  clearTimeout(startTimer);
  return store;
}
