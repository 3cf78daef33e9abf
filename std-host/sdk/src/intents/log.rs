//! `log {level, message}`: one [`Notice::Log`] (`[plugin <id> <level>] <message>` on tdm's
//! stderr), bounded in count and bytes per sandbox (past a bound the call fails and nothing is
//! kept). A nested `tool.invoke` logs against its caller's counters (`Log::shared`), so fan-out
//! cannot multiply the bound. The line is data here; the front end escapes it like every other
//! line it prints, so a plugin cannot forge extra lines or drive the terminal. The audit entry
//! is written by core's audit callback, not here.

use super::{Notice, Notices, PluginIdentity};
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
    /// Where the lines shown collect until the front end takes them.
    sink: Notices,
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
        Self { max_count, max_bytes, used: Arc::default(), sink: Notices::default(), shown: LogLevel::default() }
    }

    /// A log for a nested sandbox: the same limits, the same counters, the same sink.
    pub fn shared(&self) -> Self {
        Self {
            max_count: self.max_count,
            max_bytes: self.max_bytes,
            used: Arc::clone(&self.used),
            sink: Arc::clone(&self.sink),
            shown: self.shown,
        }
    }

    /// Writes only lines at `shown` or above.
    pub fn showing(mut self, shown: LogLevel) -> Self {
        self.shown = shown;
        self
    }

    /// Collects lines into `sink` (shared with whoever prints them).
    pub fn with_sink(mut self, sink: Notices) -> Self {
        self.sink = sink;
        self
    }

    /// Where this log's lines collect (the audit log of a nested tool reports there too).
    pub fn notices(&self) -> Notices {
        Arc::clone(&self.sink)
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
                format!("`log`: invalid level `{}`; use debug, info, warn or error.", level.escape_debug()),
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
        let line = Notice::Log { id: identity.id.clone(), level: level.to_string(), message: message.to_string() };
        match self.sink.lock() {
            Ok(mut held) => {
                held.push(line);
                HostAnswer::ok(json!({ "logged": true }))
            }
            Err(_) => HostAnswer::failed(BlockedReason::HostIntentFailed, "`log`: the log sink is poisoned."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `sink` as the front end formats them (before escaping).
    fn lines(sink: &Notices) -> String {
        sink.lock().unwrap().iter().map(|notice| format!("{notice}\n")).collect()
    }

    #[test]
    fn keeps_the_message_as_data_and_bounds() {
        let sink = Notices::default();
        let mut log = Log::new(2, 100).with_sink(sink.clone());
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(log.log(&id, "info", "a\nb\u{1b}[2J\u{202e}").result.is_ok());
        assert!(log.log(&id, "loud", "x").result.is_err());
        assert!(log.log(&id, "warn", "second").result.is_ok());
        assert!(log.log(&id, "warn", "third").result.is_err());
        assert_eq!(lines(&sink), "[plugin p info] a\nb\u{1b}[2J\u{202e}\n[plugin p warn] second\n");
    }

    #[test]
    fn lines_below_the_shown_level_are_counted_not_written() {
        let sink = Notices::default();
        let mut log = Log::new(10, 100).with_sink(sink.clone()).showing(LogLevel::Warn);
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(log.log(&id, "info", "quiet").result.is_ok());
        assert!(log.log(&id, "error", "loud").result.is_ok());
        assert_eq!(lines(&sink), "[plugin p error] loud\n");
        assert_eq!(log.used(), (2, 9));
        let mut off = Log::new(10, 100).with_sink(sink.clone()).showing(LogLevel::Off);
        assert!(off.log(&id, "error", "never").result.is_ok());
        assert!(!lines(&sink).contains("never"));
    }

    #[test]
    fn a_shared_log_spends_the_same_budget() {
        let mut caller = Log::new(3, 100);
        let mut nested = caller.shared();
        let id = PluginIdentity { id: "p".into(), hash: "h".into() };
        assert!(caller.log(&id, "info", "one").result.is_ok());
        assert!(nested.log(&id, "info", "two").result.is_ok());
        assert!(nested.shared().log(&id, "info", "three").result.is_ok());
        assert!(caller.log(&id, "info", "four").result.is_err(), "the third message spent the caller's bound");
        assert_eq!(caller.used(), (3, 11));
    }
}
