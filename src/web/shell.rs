//! The browser shell: turns browser events into machine inputs and machine commands into browser calls.
//!
//! Ownership: [`Core`] owns the current [`Connection`] (the `EventSource` and the transport's listeners on
//! it, eventsource.js; or the connection a JavaScript transport opened itself, socket.js's or fetch.js's),
//! the pending [`Timer`] and the [`Page`] listeners. Dropping a connection
//! removes its listeners and closes its source; dropping the timer cancels it. The JavaScript half holds the
//! shell's handle (`record.shell.handle`, client.js's `begin`; see `handles.rs`) and the shell holds the
//! record until `close()`, so a running stream
//! stays alive without a reference, as a native `EventSource` does; closing lets both go, and the
//! JavaScript half's FinalizationRegistry frees the shell once its link is collected.
//!
//! Reentrancy: commands go through a queue drained in order. No `RefCell` borrow is held while user code
//! runs, so `close()` and `reconnectNow()` work from inside any callback; each export holds the shell it
//! works on for the length of the call.

use alloc::vec::Vec;
use core::cell::RefCell;

use wasm_bindgen::JsValue;

use super::js::{self, Connection, Page, Source, Timer};
use crate::boundary::{status_index, Code, Note};
use crate::ladder::{Random, SplitMix64};
use crate::machine::{Command, Config, Input, Machine, Status};

/// What a client connects with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// An `EventSource` the shell makes.
    Events,
    /// A connection the client's JavaScript transport opens itself (connection.js's `open`): a `WebSocket`
    /// (socket.js), or `fetch` and a stream reader (fetch.js). The shell knows nothing more of either: a
    /// transport a page does not import costs its module nothing.
    Own,
}

pub(crate) struct Core {
    pub machine: Machine<SplitMix64, JsValue>,
    pub transport: Transport,
    /// The JavaScript half of this client; `None` once closed.
    link: Option<JsValue>,
    /// Whether a source has been created (a URL that fails later is reported, not thrown).
    opened: bool,
    connection: Option<Connection>,
    timer: Option<Timer>,
    /// The probe that is out, aborted when dropped.
    probe: Option<Timer>,
    /// The pause timer (`pauseWhenHiddenMs`).
    pause: Option<Timer>,
    page: Option<Page>,
    /// Commands not yet carried out; `head` is the next.
    queue: Vec<Command>,
    head: usize,
    /// Commands queued before a `close()` that came from a callback during the drain: news among them is
    /// stale (see `feed`).
    stale: usize,
    draining: bool,
    /// An exception from opening the first source, rethrown by the constructor.
    pub open_error: Option<JsValue>,
    /// Set when the first source could not be opened: a stream that never started tells nobody anything.
    silent: bool,
}

pub(crate) struct Shared {
    pub core: RefCell<Core>,
}

/// A borrow that cannot be had: a bug, which ends the module as a panic would, without a panic's message.
#[cold]
pub(crate) fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

/// One seed per client, from `Math.random()`: the jitter only has to differ between clients, not resist
/// prediction, and `crypto.getRandomValues` (through getrandom) cost the first construct 0.2 to 0.3 ms in a
/// fresh process and the package its error path.
fn seed() -> u64 {
    js::random() as u64
}

impl Shared {
    /// The core, borrowed. One call site for the borrow check, so one copy of its trap.
    #[inline(never)]
    pub(crate) fn get(&self) -> core::cell::Ref<'_, Core> {
        self.core.try_borrow().unwrap_or_else(|_| trap())
    }

    /// The core, borrowed mutably (see [`Shared::get`]).
    #[inline(never)]
    pub(crate) fn get_mut(&self) -> core::cell::RefMut<'_, Core> {
        self.core.try_borrow_mut().unwrap_or_else(|_| trap())
    }

    pub(crate) fn new(config: Config, transport: Transport, link: JsValue) -> Shared {
        let mut rng = SplitMix64::new(seed());
        // Mix once so that nearby seeds do not start nearby.
        let _ = rng.next_u64();
        Shared {
            core: RefCell::new(Core {
                machine: Machine::with_ids(config, rng),
                transport,
                link: Some(link),
                opened: false,
                connection: None,
                timer: None,
                probe: None,
                pause: None,
                page: None,
                queue: Vec::new(),
                head: 0,
                stale: 0,
                draining: false,
                open_error: None,
                silent: false,
            }),
        }
    }

    /// Starts: the first connection, then the page listeners. Returns what opening the first source threw.
    pub(crate) fn start(&self) -> Result<(), JsValue> {
        self.feed(Input::Start);
        let open_error = self.get_mut().open_error.take();
        if let Some(e) = open_error {
            self.feed(Input::Close);
            return Err(e);
        }
        let mut core = self.get_mut();
        let config = *core.machine.config();
        if let Some(link) = &core.link {
            let flag = |b: bool| b as u8 as f64;
            let page = js::watch(
                link,
                flag(config.wake_on_visible || config.pause_when_hidden_ms > 0),
                flag(config.wake_on_online),
            );
            core.page = Some(Page(page));
        }
        Ok(())
    }

    /// One input from the JavaScript half (see [`Code`]; the questions and the probe's answer are the
    /// `input` export's).
    pub(crate) fn input(&self, code: Code, arg: f64) {
        let input = match code {
            Code::Opened => Input::Opened,
            Code::Failed => Input::Failed {
                browser_gave_up: arg == 1.0,
            },
            Code::Timer => {
                // It has fired: drop our handle to it before the machine arms the next one.
                let spent = self.get_mut().timer.take();
                drop(spent);
                Input::TimerFired
            }
            Code::Wake => Input::PageVisible,
            Code::Hidden => Input::PageHidden,
            Code::Restored => Input::Restored,
            Code::Pause => {
                let spent = self.get_mut().pause.take();
                drop(spent);
                Input::PauseFired
            }
            Code::Online => Input::Online,
            Code::Offline => Input::Offline,
            // The hint's data as a number of ms (effects.js's `hintMs` reads it as `retry:` is read); a negative
            // number for data that is not a delay, which changes nothing.
            Code::Hint if arg >= 0.0 => Input::RetryHint { ms: delay_ms(arg) },
            Code::RetryNow => Input::RetryNow,
            #[cfg(feature = "fetch")]
            Code::Url => return self.url_ready(),
            // A `retry:` field is policy: the machine decides what it changes.
            #[cfg(feature = "fetch")]
            Code::RetryField => Input::RetryField { ms: delay_ms(arg) },
            Code::Close => Input::Close,
            Code::Ended => Input::Ended,
            Code::Unusable => Input::Unusable,
            Code::Watchdog => {
                let (spent, active) = {
                    let mut core = self.get_mut();
                    let active = core
                        .connection
                        .as_ref()
                        .is_some_and(|c| js::active(&c.record));
                    (core.timer.take(), active)
                };
                drop(spent);
                Input::WatchdogFired { active }
            }
            _ => return,
        };
        self.feed(input);
    }

    /// Tells the machine what ids the live source's events carried (see [`Input::Seen`]).
    pub(crate) fn sync_ids(&self) {
        let mut core = self.get_mut();
        let seen = core.connection.as_ref().and_then(|c| {
            let last = js::event_id(&c.record, 1.0);
            (!last.is_undefined()).then(|| Input::Seen {
                first: js::event_id(&c.record, 0.0),
                last,
            })
        });
        if let Some(seen) = seen {
            core.machine.handle_into(seen, &mut Vec::new());
        }
    }

    /// Feeds one input and carries out what the machine says, in order.
    pub(crate) fn feed(&self, input: Input<JsValue>) {
        self.sync_ids();
        {
            let mut core = self.get_mut();
            let core = &mut *core;
            core.machine.set_now(js::now());
            if core.draining && matches!(input, Input::Close) {
                core.stale = core.queue.len();
            }
            core.machine.handle_into(input, &mut core.queue);
            if core.draining {
                return;
            }
            core.draining = true;
        }
        loop {
            let next = {
                let mut core = self.get_mut();
                let core = &mut *core;
                let mut next = None;
                while let Some(&command) = core.queue.get(core.head) {
                    core.head += 1;
                    // A callback closed the client: news, and effects that would start something (a
                    // source, a timer, a probe: the close's own commands would only undo them), queued
                    // before that are stale; effects that stop something still run. (What the machine
                    // queued with its own end, as for a 204, is not stale.)
                    if !(core.head <= core.stale && is_stale_after_close(&command)) {
                        next = Some(command);
                        break;
                    }
                }
                if next.is_none() {
                    core.queue.clear();
                    core.head = 0;
                    core.stale = 0;
                    core.draining = false;
                }
                next
            };
            match next {
                Some(command) => self.exec(command),
                None => break,
            }
        }
        // Closed and told: let the page listeners and the JavaScript half go.
        let (page, link) = {
            let mut core = self.get_mut();
            if !core.machine.closed() || core.draining {
                return;
            }
            (core.page.take(), core.link.take())
        };
        drop(page);
        drop(link);
    }

    fn link(&self) -> Option<JsValue> {
        self.get().link.clone()
    }

    fn notify(&self, note: Note, a: u32, b: u32) {
        self.tell(note, [a as f64, b as f64, 0.0]);
    }

    fn tell(&self, note: Note, [a, b, c]: [f64; 3]) {
        if self.get().silent {
            return;
        }
        if let Some(link) = self.link() {
            js::notify(&link, note as u8 as f64, a, b, c);
        }
    }

    /// Puts `value` in the timer slot `slot` picks. What was there is dropped (cancelled, which calls
    /// JavaScript) after the borrow has ended.
    fn set(&self, slot: impl FnOnce(&mut Core) -> &mut Option<Timer>, value: Option<Timer>) {
        let old = core::mem::replace(slot(&mut self.get_mut()), value);
        drop(old);
    }

    /// Arms a timer in the slot `slot` picks: after `ms`, the input `code`.
    fn arm(&self, slot: impl FnOnce(&mut Core) -> &mut Option<Timer>, ms: u32, code: Code) {
        if let Some(link) = self.link() {
            self.set(slot, Some(Timer::new(&link, ms, code)));
        }
    }

    fn exec(&self, command: Command) {
        match command {
            Command::OpenSource { resume } => self.open(resume),
            Command::CloseSource => {
                let old = self.get_mut().connection.take();
                drop(old);
            }
            Command::ArmTimer { ms } => self.arm(|c| &mut c.timer, ms, Code::Timer),
            Command::ArmWatchdog { ms } => self.arm(|c| &mut c.timer, ms, Code::Watchdog),
            Command::Probe { id } => {
                if let Some(link) = self.link() {
                    self.set(
                        |c| &mut c.probe,
                        Some(Timer::of(js::probe(&link, id as f64))),
                    );
                }
            }
            Command::ArmPause { ms } => self.arm(|c| &mut c.pause, ms, Code::Pause),
            Command::DisarmPause => self.set(|c| &mut c.pause, None),
            Command::CancelProbe => self.set(|c| &mut c.probe, None),
            Command::Unauthorized { status } => self.notify(Note::Unauthorized, status as u32, 0),
            Command::DisarmTimer => self.set(|c| &mut c.timer, None),
            Command::Status(status) => self.notify(Note::Status, status_index(status), 0),
            Command::ReportError => self.notify(Note::Error, 0, 0),
            Command::Connected { attempt } => self.notify(Note::Open, attempt, 0),
            Command::RetryScheduled { attempt, delay_ms } => {
                self.notify(Note::Retry, attempt, delay_ms)
            }
            Command::GaveUp { attempts } => self.notify(Note::GiveUp, attempts, 0),
            Command::StallsRecur { stalls } => self.notify(Note::StallsRecur, stalls, 0),
            Command::ResumeIdDropped { encoded_len } => self.notify(
                Note::IdDropped,
                encoded_len,
                crate::machine::MAX_RESUME_ID as u32,
            ),
            Command::Trace(step) => self.tell(Note::Trace, crate::boundary::trace_note(step)),
        }
    }

    fn open(&self, resume: bool) {
        let Some(link) = self.link() else { return };
        // The id this attempt carries, copied out of the machine: the URL function is user code, which
        // may call back into the shell.
        let id = if resume {
            self.get().machine.resumed_from().clone()
        } else {
            JsValue::UNDEFINED
        };
        if self.get().transport == Transport::Own {
            // A fetch's header carries the id this attempt resumes from whatever `lastEventIdParam` says,
            // as an EventSource's own reconnect does. The JavaScript half awaits what the user's functions
            // return.
            let from = self.get().machine.resumed_from().clone();
            let record = js::open(&link, &id, &from);
            return self.opened(record.map(|record| (Source::Live, record)));
        }
        let source = js::url_of(&link, &id).and_then(|url| {
            // Not a URL: the wait for the Promise a URL function returned (see `Code::Url`), which only
            // the fetch entry's JavaScript gives.
            #[cfg(feature = "fetch")]
            if !url.is_string() {
                return Ok((Source::Waiting, url));
            }
            self.source(&url, &link)
        });
        self.opened(source);
    }

    /// An `EventSource` for `url` (`link` carries `withCredentials`), with the JavaScript half's listeners
    /// on it.
    fn source(&self, url: &JsValue, link: &JsValue) -> Result<(Source, JsValue), JsValue> {
        let source = js::source(link, url)?;
        let record = js::attach(link, &source);
        Ok((Source::Live, record))
    }

    /// The attempt that waited for its URL has it (see `fetch.js`'s `waitForUrl`): its source, now.
    #[cfg(feature = "fetch")]
    fn url_ready(&self) {
        let wait = match &self.get().connection {
            Some(Connection {
                source: Source::Waiting,
                record,
            }) => record.clone(),
            _ => return,
        };
        let Some(link) = self.link() else { return };
        let url = js::item(&wait, 0.0);
        let source = self.source(&url, &link);
        self.opened(source);
    }

    /// Keeps the connection an attempt made, or fails the attempt with what it threw.
    fn opened(&self, source: Result<(Source, JsValue), JsValue>) {
        let source = match source {
            Ok(s) => s,
            Err(e) => {
                // A URL function that throws or an invalid URL: the first time, the constructor throws it
                // (and the stream, which never started, reports nothing); later, it is reported and counts
                // as a failed attempt.
                {
                    let mut core = self.get_mut();
                    if !core.opened {
                        core.open_error = Some(e);
                        core.silent = true;
                        return;
                    }
                }
                js::report(&e);
                self.feed(Input::Failed {
                    browser_gave_up: true,
                });
                return;
            }
        };
        let (source, record) = source;
        let mut core = self.get_mut();
        core.opened = true;
        let old = core.connection.replace(Connection { source, record });
        drop(core);
        drop(old);
    }

    /// How many of our connections, timers, probes and page listeners are live: 0 after `close()` (for
    /// tests).
    pub(crate) fn live(&self) -> u32 {
        let core = self.get();
        core.connection.is_some() as u32
            + core.timer.is_some() as u32
            + core.probe.is_some() as u32
            + core.pause.is_some() as u32
            + core.page.is_some() as u32
    }

    /// A probe's answer: the probe is spent.
    pub(crate) fn probed(&self, input: Input<JsValue>) {
        let spent = self.get_mut().probe.take();
        drop(spent);
        self.feed(input);
    }
}

/// A delay the JavaScript half read from the server, in whole ms: a larger one than a `u32` holds is the
/// longest there is (the machine caps it with `maxHintMs`).
pub(crate) fn delay_ms(ms: f64) -> u32 {
    // `as` saturates, and reads NaN as 0; the callers pass only numbers of 0 or more.
    ms as u32
}

/// Commands that mean nothing once the client is closed: notifications (the trace's steps among them), and
/// effects that start something (a request would go out after `close()`), whose undoing the close queued.
/// Cancelling what was never started finds an empty slot.
fn is_stale_after_close(command: &Command) -> bool {
    match command {
        Command::Status(status) => *status != Status::Closed,
        Command::ReportError | Command::Connected { .. } => true,
        Command::RetryScheduled { .. } | Command::GaveUp { .. } => true,
        Command::ResumeIdDropped { .. } | Command::Unauthorized { .. } => true,
        Command::StallsRecur { .. } | Command::Trace(_) => true,
        Command::OpenSource { .. } | Command::Probe { .. } => true,
        Command::ArmTimer { .. } | Command::ArmWatchdog { .. } | Command::ArmPause { .. } => true,
        Command::CloseSource
        | Command::DisarmTimer
        | Command::DisarmPause
        | Command::CancelProbe => false,
    }
}
