// The classic script's global, typed through the package's exports.
/// <reference types="managed-eventsource/global" />
const feed = new managedEventSource.ManagedEventSource('/api/stream', { baseMs: 500 });
feed.onmessage = (ev) => void ev.data.length;
managedEventSource.ready.then(({ createManagedStream }) => createManagedStream('/x', {})());
void managedEventSource.prepare().then(() => undefined);
