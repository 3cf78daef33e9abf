//! What the demo runs: each bundled plugin with one intent, and the outcome it must give.

use crate::plugins::{Bundled, ECHO, FORBIDDEN_IMPORT, GROW, HELLO, SPIN, TRAP};

/// What an intent's outcome must be.
pub enum Expect {
    /// Exactly this outcome JSON.
    Outcome(&'static str),
    /// A failed outcome with this `blockedReason`.
    Blocked(&'static str),
}

/// One plugin, one intent, one expectation.
pub struct Case {
    /// The plugin.
    pub plugin: &'static Bundled,
    /// The intent's method.
    pub method: &'static str,
    /// Its params, as JSON text (no spaces: the demo prints it last on a line).
    pub params: &'static str,
    /// The outcome it must give.
    pub expect: Expect,
}

/// Every case, in the order the demo runs and prints them.
pub static CASES: [Case; 6] = [
    Case {
        plugin: &ECHO,
        method: "greet",
        params: r#"{"name":"Ada"}"#,
        expect: Expect::Outcome(r#"{"status":"completed","output":{"name":"Ada"}}"#),
    },
    Case {
        plugin: &HELLO,
        method: "greet",
        params: r#"{"name":"Ada"}"#,
        expect: Expect::Outcome(r#"{"status":"completed","output":{"greeting":"Hello, Ada!"}}"#),
    },
    Case { plugin: &SPIN, method: "spin", params: "{}", expect: Expect::Blocked("fuel_exhausted") },
    Case { plugin: &GROW, method: "grow", params: "{}", expect: Expect::Blocked("memory_limit_exceeded") },
    Case { plugin: &FORBIDDEN_IMPORT, method: "run", params: "{}", expect: Expect::Blocked("import_not_allowed") },
    Case { plugin: &TRAP, method: "divide", params: "{}", expect: Expect::Blocked("plugin_trap") },
];
