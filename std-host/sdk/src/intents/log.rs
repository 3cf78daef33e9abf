//! `log {level, message}`: one line `[plugin <id> <level>] <message>` on tdm's stderr, bounded
//! in count and bytes per sandbox (past a bound the call fails and nothing is written). A
//! nested `tool.invoke` logs against its caller's counters (`Log::shared`), so fan-out cannot
//! multiply the bound. The line
//! is escaped by `crate::terminal` like every other line tdm prints, so a plugin cannot forge
//! extra lines or drive the terminal. The audit entry is written by core's audit callback, not
//! here.

use super::PluginIdentity;
use crate::terminal;
use contour_core::{BlockedReason, HostAnswer};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Default number of messages per sandbox.
pub const DEFAULT_MAX_COUNT: u32 = 1_000;
/// Default message bytes per sandbox: 256 KiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024;

/// The levels a plugin may log at.
pub const LEVELS: [&str; 4] = ["debug", "info", "warn", "error"];

/// The lowest level of the plugin's log lines tdm shows (`--log-level`, `-q` is `off`): lines
/// below it are not written, but still counted, audited and answered `{"logged": true}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Every line (the default).
    #[default]
    Debug,
    /// `info` and above.
    Info,
    /// `warn` and `error`.
    Warn,
    /// `error` only.
    Error,
    /// None.
    Off,
}

impl LogLevel {
    /// Every value, in order.
    pub const ALL: [LogLevel; 5] = [Self::Debug, Self::Info, Self::Warn, Self::Error, Self::Off];

    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
            Self::Off => "off",
        }
    }

    /// Parses a flag value.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.as_str() == name)
    }

    /// Whether a line at `level` (one of [`LEVELS`]) is shown.
    fn shows(self, level: &str) -> bool {
        Self::from_name(level).is_some_and(|line| line >= self && line != Self::Off)
    }
}

/// Messages and message bytes logged so far.
#[derive(Debug, Clone, Copy, Default)]
struct LogUse {
    count: u32,
    bytes: u64,
}

/// Log limits and counters of one sandbox (and of the tools it invokes).
#[derive(Debug)]
pub struct Log {
    max_count: u32,
    max_bytes: u64,
    used: Arc<Mutex<LogUse>>,
    /// Where lines go instead of stderr (tests, embedders).
    sink: Option<Arc<Mutex<Vec<u8>>>>,
    /// The lowest level written.
    shown: LogLevel,
}

impl Default for Log {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_COUNT, DEFAULT_MAX_BYTES)
    }
}

impl Log {
    /// At most `max_count` messages and `max_bytes` bytes (of messages, as given).
    pub fn new(max_count: u32, max_bytes: u64) -> Self {
        Self { max_count, max_bytes, used: Arc::default(), sink: None, shown: LogLevel::default() }
    }

    /// A log for a nested sandbox: the same limits, the same counters, the same sink.
    pub fn shared(&self) -> Self {
        Self {
            max_count: self.max_count,
            max_bytes: self.max_bytes,
            used: Arc::clone(&self.used),
            sink: self.sink.clone(),
            shown: self.shown,
        }
    }

    /// Writes only lines at `shown` or above.
    pub fn showing(mut self, shown: LogLevel) -> Self {
        self.shown = shown;
        self
    }

    /// Writes lines into `sink` instead of stderr.
    pub fn with_sink(mut self, sink: Arc<Mutex<Vec<u8>>>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Messages and message bytes logged so far (by this sandbox and the tools it invoked).
    pub fn used(&self) -> (u32, u64) {
        self.used.lock().map_or((self.max_count, self.max_bytes), |u| (u.count, u.bytes))
    }

    /// Logs one message.
    pub fn log(&mut self, identity: &PluginIdentity, level: &str, message: &str) -> HostAnswer {
        if !LEVELS.contains(&level) {
            return HostAnswer::failed(
                BlockedReason::InvalidHostRequest,
                format!("`log`: invalid level `{}`; use debug, info, warn or error.", terminal::escape(level)),
            );
        }
        let size = message.len() as u64;
        let Ok(mut used) = self.used.lock() else {
            return HostAnswer::failed(BlockedReason::HostFault, "`log`: the log counters are poisoned.");
        };
        if used.count >= self.max_count || used.bytes.saturating_add(size) > self.max_bytes {
            return HostAnswer::failed(
                BlockedReason::HostCallLimitExceeded,
                format!(
                    "`log`: the limits are {} messages and {} bytes per sandbox; nothing was written.",
                    self.max_count, self.max_bytes
                ),
            );
        }
        used.count += 1;
        used.bytes += size;
        drop(used);
        if !self.shown.shows(level) {
            return HostAnswer::ok(json!({ "logged": true }));
        }
        let line = format!("[plugin {} {level}] {message}", identity.id);
        let written = match &self.sink {
            Some(sink) => match sink.lock() {
                Ok(mut buffer) => terminal::write_line(&mut *buffer, &line),
                Err(_) => Err(std::io::Error::other("the log sink is poisoned")),
            },
            None => terminal::write_line(&mut std::io::stderr().lock(), &line),
        };
        match written {
            Ok(()) => HostAnswer::ok(json!({ "logged": true })),
            Err(e) => HostAnswer::failed(BlockedReason::HostIntentFailed, format!("`log`: {e}.")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bounds() {
        let sink = Arc::new(Mutex::new(Vec::new()));
        let mut log = Log::new(2, 100).with_sink(sink.clone());
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(log.log(&id, "info", "a\nb\u{1b}[2J\u{202e}").result.is_ok());
        assert!(log.log(&id, "loud", "x").result.is_err());
        assert!(log.log(&id, "warn", "second").result.is_ok());
        assert!(log.log(&id, "warn", "third").result.is_err());
        let text = String::from_utf8(sink.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "[plugin p info] a\\u{a}b\\u{1b}[2J\\u{202e}\n[plugin p warn] second\n");
    }

    #[test]
    fn lines_below_the_shown_level_are_counted_not_written() {
        let sink = Arc::new(Mutex::new(Vec::new()));
        let mut log = Log::new(10, 100).with_sink(sink.clone()).showing(LogLevel::Warn);
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(log.log(&id, "info", "quiet").result.is_ok());
        assert!(log.log(&id, "error", "loud").result.is_ok());
        assert_eq!(String::from_utf8(sink.lock().unwrap().clone()).unwrap(), "[plugin p error] loud\n");
        assert_eq!(log.used(), (2, 9));
        let mut off = Log::new(10, 100).with_sink(sink.clone()).showing(LogLevel::Off);
        assert!(off.log(&id, "error", "never").result.is_ok());
        assert!(!String::from_utf8(sink.lock().unwrap().clone()).unwrap().contains("never"));
    }

    #[test]
    fn a_shared_log_spends_the_same_budget() {
        let sink = Arc::new(Mutex::new(Vec::new()));
        let mut caller = Log::new(3, 100).with_sink(sink);
        let mut nested = caller.shared();
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(caller.log(&id, "info", "one").result.is_ok());
        assert!(nested.log(&id, "info", "two").result.is_ok());
        assert!(nested.shared().log(&id, "info", "three").result.is_ok());
        assert!(caller.log(&id, "info", "four").result.is_err(), "the third message spent the caller's bound");
        assert_eq!(caller.used(), (3, 11));
    }
}
