//! What the REPL reads: an entry is one line, or several while a JSON value's brackets are
//! open (`greet {` ... `}`), parsed into an intent, a raw JSON-RPC request or a `:`-command.

use tdm_sdk::params::Params;

/// The most bytes one entry may gather over its lines (a request is at most 1 MiB; room for the
/// method and whitespace).
pub const MAX_ENTRY_BYTES: usize = 2 * 1024 * 1024;

/// One parsed entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Nothing to do.
    Blank,
    /// A `:`-command.
    Command(Command),
    /// `METHOD [JSON params]`; params default to `{}`.
    Intent {
        /// The method.
        method: String,
        /// Its params, as typed.
        params: Params,
    },
    /// `METHOD @FILE`: params read from a file.
    IntentFromFile {
        /// The method.
        method: String,
        /// The params file.
        path: String,
    },
    /// A raw JSON-RPC request, sent as is.
    Raw(String),
}

/// A `:`-command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `:help`.
    Help,
    /// `:intents`.
    Intents,
    /// `:limits`.
    Limits,
    /// `:fuel N`, or `:fuel` alone to show the budget.
    Fuel(Option<u64>),
    /// `:grant PERM`.
    Grant(String),
    /// `:stats`.
    Stats,
    /// `:reset`.
    Reset,
    /// `:reload`.
    Reload,
    /// `:load FILE`.
    Load(String),
    /// `:record FILE`.
    Record(String),
    /// `:stop`.
    Stop,
    /// `:quit`.
    Quit,
}

impl Command {
    /// The command's name, as JSON output names it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Help => "help",
            Self::Intents => "intents",
            Self::Limits => "limits",
            Self::Fuel(_) => "fuel",
            Self::Grant(_) => "grant",
            Self::Stats => "stats",
            Self::Reset => "reset",
            Self::Reload => "reload",
            Self::Load(_) => "load",
            Self::Record(_) => "record",
            Self::Stop => "stop",
            Self::Quit => "quit",
        }
    }
}

/// The REPL commands and their one-line help, in `:help` order.
pub const COMMANDS: [(&str, &str); 13] = [
    (":help", "this list"),
    (":intents", "the intents the plugin declares, with their descriptions"),
    (":limits", "the policy the plugin runs under"),
    (":fuel", ":fuel N sets the fuel budget of each following intent (fresh instance; within an approval)"),
    (":grant", ":grant PERM grants a permission (file plugins only; fresh instance)"),
    (":stats", "intents run, total fuel, last peak memory"),
    (":reset", "discard the instance; the next intent starts a fresh one"),
    (":reload", "read the module again (an installed plugin only as approved); fresh instance"),
    (":load", ":load FILE runs the entry in FILE (METHOD [params] or a JSON-RPC request)"),
    (":record", ":record FILE records the session into a trace for tdm replay (from a fresh instance)"),
    (":stop", "stops recording and writes the trace"),
    (":quit", "leave (Ctrl-D too)"),
    (":q", "same as :quit"),
];

/// The permission forms `:grant` completes.
pub const PERMISSION_FORMS: [&str; 4] = ["network:", "tool:", "vault:read", "context:read"];

/// Parses one entry; a malformed one is an error message.
pub fn parse_line(line: &str) -> Result<Line, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Line::Blank);
    }
    if line.starts_with('{') {
        return raw_request(line).map(|()| Line::Raw(line.to_string()));
    }
    if let Some(command) = line.strip_prefix(':') {
        return parse_command(command).map(Line::Command);
    }
    let (method, rest) = split_word(line);
    if let Some(path) = rest.strip_prefix('@') {
        if path.is_empty() {
            return Err(format!("usage: {method} @FILE (the params are read from FILE)"));
        }
        return Ok(Line::IntentFromFile { method: method.to_string(), path: path.to_string() });
    }
    let params = if rest.is_empty() {
        Params::empty()
    } else {
        Params::from_text(rest).map_err(|e| format!("the params of `{method}` are not valid JSON: {e}"))?
    };
    Ok(Line::Intent { method: method.to_string(), params })
}

/// Checks that a line starting with `{` is a request the REPL can send as it is: a JSON object
/// with a string `method`. Anything else is the user's slip (params without a method, say),
/// told at once instead of sent to the plugin, whose answer would blame the plugin.
fn raw_request(line: &str) -> Result<(), String> {
    tdm_sdk::session::raw_method(line).map(drop).map_err(|why| {
        let hint = if why == tdm_sdk::session::RawRequestError::NoMethod {
            ": to call an intent with these params, write `METHOD {...}`"
        } else {
            ""
        };
        format!("a line starting with `{{` is sent as a raw JSON-RPC request, and {why}{hint}")
    })
}

/// Splits off the first whitespace-separated word; the rest is trimmed.
fn split_word(text: &str) -> (&str, &str) {
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

/// Parses a command without its `:`.
fn parse_command(text: &str) -> Result<Command, String> {
    let (name, arg) = split_word(text);
    let no_arg = |command: Command| {
        if arg.is_empty() {
            Ok(command)
        } else {
            Err(format!("`:{name}` takes no argument"))
        }
    };
    match name {
        "help" => no_arg(Command::Help),
        "intents" => no_arg(Command::Intents),
        "limits" => no_arg(Command::Limits),
        "stats" => no_arg(Command::Stats),
        "reset" => no_arg(Command::Reset),
        "reload" => no_arg(Command::Reload),
        "stop" => no_arg(Command::Stop),
        "quit" | "q" => no_arg(Command::Quit),
        "fuel" if arg.is_empty() => Ok(Command::Fuel(None)),
        "fuel" => match arg.replace('_', "").parse::<u64>() {
            Ok(0) => Err("the fuel budget must be greater than zero".to_string()),
            Ok(n) => Ok(Command::Fuel(Some(n))),
            Err(_) => Err(format!("`{arg}` is not a fuel budget (usage: :fuel N, N a positive whole number)")),
        },
        "grant" if arg.is_empty() => Err("usage: :grant PERM (e.g. :grant network:api.example.com)".to_string()),
        "grant" => Ok(Command::Grant(arg.to_string())),
        "load" if arg.is_empty() => Err("usage: :load FILE".to_string()),
        "load" => Ok(Command::Load(arg.to_string())),
        "record" if arg.is_empty() => Err("usage: :record FILE".to_string()),
        "record" => Ok(Command::Record(arg.to_string())),
        _ => Err(format!("unknown command `:{name}` (:help lists the commands)")),
    }
}

/// JSON bracket depth over an entry's text, fed line by line (strings skipped), so an entry
/// of many lines is scanned once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Brackets {
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl Brackets {
    /// Scans more of the entry.
    pub fn feed(&mut self, text: &str) {
        for c in text.chars() {
            if self.in_string {
                match c {
                    _ if self.escaped => self.escaped = false,
                    '\\' => self.escaped = true,
                    '"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.depth += 1,
                '}' | ']' => self.depth -= 1,
                _ => {}
            }
        }
    }

    /// Whether brackets are still open.
    pub fn open(&self) -> bool {
        self.depth > 0
    }
}

/// Whether an entry starting with `first` may go on over more lines: an intent or a raw
/// request (never a command, nor `METHOD @FILE`) whose JSON so far is an unfinished beginning.
/// JSON that is already wrong on the first line ends the entry at once, so a typo like
/// `greet {oops` is reported instead of swallowing the lines after it.
pub fn may_continue(first: &str) -> bool {
    let trimmed = first.trim();
    if trimmed.starts_with(':') {
        return false;
    }
    let json = if trimmed.starts_with('{') { trimmed } else { split_word(trimmed).1 };
    if json.is_empty() || json.starts_with('@') {
        return false;
    }
    serde_json::from_str::<serde::de::IgnoredAny>(json).err().is_some_and(|e| e.is_eof())
}

/// Whether the entry so far goes on over the next line (the line editor's check on the whole
/// text): its first line [may continue](may_continue), its brackets are open, and it does not
/// end with a blank line (which ends any entry).
pub fn continues(entry: &str) -> bool {
    let first = entry.lines().next().unwrap_or("");
    if !may_continue(first) || (entry.lines().count() > 1 && entry.lines().last().is_some_and(|l| l.trim().is_empty()))
    {
        return false;
    }
    let mut brackets = Brackets::default();
    brackets.feed(entry);
    brackets.open()
}

/// What the gathering of lines into entries yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A complete entry and the number of its first line.
    Entry {
        /// Its first line's number.
        line: u64,
        /// Its text.
        text: String,
    },
    /// An entry (or line) that cannot be run, and why.
    Error {
        /// Its first line's number.
        line: u64,
        /// Why.
        message: String,
    },
}

/// Gathers piped lines into entries: an entry goes on while [`may_continue`] and its
/// brackets are open, and ends, reported, at a blank line, a command, a line that is not
/// UTF-8, the end of the input or [`MAX_ENTRY_BYTES`]. Every line is scanned once.
#[derive(Debug, Default)]
pub struct Gather {
    entry: String,
    brackets: Brackets,
    first: u64,
}

impl Gather {
    /// Takes line `number` (`None`: not UTF-8); what is complete now.
    pub fn push(&mut self, number: u64, line: Option<&str>) -> Vec<Step> {
        if self.entry.is_empty() {
            return self.start(number, line).into_iter().collect();
        }
        let why = match line {
            None => "a line of the entry is not UTF-8".to_string(),
            Some(text) if text.trim().is_empty() => {
                "the entry ended with a blank line while its JSON brackets were still open".to_string()
            }
            Some(text) if text.trim_start().starts_with(':') => {
                "a command came while the entry's JSON brackets were still open".to_string()
            }
            Some(text) if self.entry.len() + text.len() > MAX_ENTRY_BYTES => {
                format!("the entry is longer than {MAX_ENTRY_BYTES} bytes")
            }
            Some(text) => {
                self.entry.push_str(text);
                self.brackets.feed(text);
                if self.brackets.open() {
                    return Vec::new();
                }
                return vec![Step::Entry { line: self.first, text: std::mem::take(&mut self.entry) }];
            }
        };
        self.entry.clear();
        let mut steps = vec![Step::Error { line: self.first, message: why }];
        if let Some(command) = line.filter(|text| text.trim_start().starts_with(':')) {
            steps.extend(self.start(number, Some(command)));
        }
        steps
    }

    /// Takes line `number`, longer than [`MAX_ENTRY_BYTES`] and so never kept: it is reported,
    /// and ends an entry in progress.
    pub fn push_too_long(&mut self, number: u64) -> Vec<Step> {
        let line = if self.entry.is_empty() { number } else { self.first };
        self.entry.clear();
        vec![Step::Error { line, message: format!("the entry is longer than {MAX_ENTRY_BYTES} bytes") }]
    }

    /// The end of the input: an entry still open is reported.
    pub fn finish(&mut self) -> Option<Step> {
        if self.entry.is_empty() {
            return None;
        }
        self.entry.clear();
        Some(Step::Error {
            line: self.first,
            message: "the input ended inside an entry whose JSON brackets are still open".into(),
        })
    }

    fn start(&mut self, number: u64, line: Option<&str>) -> Option<Step> {
        let Some(text) = line else {
            return Some(Step::Error { line: number, message: "the line is not UTF-8".into() });
        };
        if may_continue(text) {
            self.brackets = Brackets::default();
            self.brackets.feed(text);
            if self.brackets.open() {
                self.entry = text.to_string();
                self.first = number;
                return None;
            }
        }
        Some(Step::Entry { line: number, text: text.to_string() })
    }
}

/// Tab completion: `(start, candidates)` for the text before the cursor. The first word
/// completes to a command (after `:`) or an intent name; the argument of `:grant` to a
/// permission form.
pub fn complete(intents: &[String], before: &str) -> (usize, Vec<String>) {
    if !before.contains(char::is_whitespace) {
        let candidates: Vec<String> = if before.starts_with(':') {
            COMMANDS.iter().map(|(name, _)| name.to_string()).filter(|name| name.starts_with(before)).collect()
        } else {
            intents.iter().filter(|name| name.starts_with(before)).cloned().collect()
        };
        return (0, candidates);
    }
    if let Some(arg) = before.strip_prefix(":grant ") {
        let start = before.len() - arg.trim_start().len();
        let arg = arg.trim_start();
        if !arg.contains(char::is_whitespace) {
            let forms = PERMISSION_FORMS.iter().filter(|form| form.starts_with(arg)).map(|f| f.to_string()).collect();
            return (start, forms);
        }
    }
    (0, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Params {
        Params::from_text(text).unwrap()
    }

    #[test]
    fn parses_intent_lines() {
        assert_eq!(parse_line("greet"), Ok(Line::Intent { method: "greet".into(), params: params("{}") }));
        assert_eq!(
            parse_line("  greet   {\"name\": \"Ada\"}  \n"),
            Ok(Line::Intent { method: "greet".into(), params: params("{\"name\": \"Ada\"}") })
        );
        assert_eq!(parse_line("sum [1, 2]"), Ok(Line::Intent { method: "sum".into(), params: params("[1, 2]") }));
        assert_eq!(
            parse_line("greet {\n  \"a\": 1\n}"),
            Ok(Line::Intent { method: "greet".into(), params: params("{\n  \"a\": 1\n}") })
        );
        assert_eq!(parse_line("big @p.json"), Ok(Line::IntentFromFile { method: "big".into(), path: "p.json".into() }));
        assert_eq!(parse_line("\t\n"), Ok(Line::Blank));
        let error = parse_line("greet {oops").expect_err("bad JSON");
        assert!(error.contains("not valid JSON"), "{error}");
    }

    #[test]
    fn a_line_starting_with_a_brace_is_a_raw_request() {
        let raw = r#"{"jsonrpc":"2.0","id":9,"method":"x","params":{}}"#;
        assert_eq!(parse_line(&format!(" {raw}\n")), Ok(Line::Raw(raw.into())));
        let error = parse_line("{not json").expect_err("not JSON");
        assert!(error.contains("is not JSON"), "{error}");
        let error = parse_line(r#"{"name": "Ada"}"#).expect_err("params, not a request");
        assert!(error.contains("no string `method`") && error.contains("METHOD {...}"), "{error}");
        // A member named twice, in any spelling: which copy counts differs between readers (the
        // host's check took the last `method`, the SDKs run the first).
        for twice in [
            r#"{"jsonrpc":"2.0","id":1,"method":"greet","params":{},"method":"ping"}"#,
            r#"{"method":"greet","method":"ping","params":{}}"#,
            r#"{"method":"ping","params":{},"params":{"x":1}}"#,
        ] {
            let error = parse_line(twice).expect_err(twice);
            assert!(error.contains("twice"), "{error}");
            // And a session never reads a method out of it (an installed plugin refuses it).
            assert_eq!(tdm_sdk::session::Request::Raw(twice.into()).method(), None, "{twice}");
        }
    }

    #[test]
    fn parses_commands() {
        let cases = [
            (":help", Command::Help),
            (":intents", Command::Intents),
            (":limits", Command::Limits),
            (":fuel", Command::Fuel(None)),
            (":fuel 5000", Command::Fuel(Some(5000))),
            (":fuel 1_000_000", Command::Fuel(Some(1_000_000))),
            (":grant vault:read", Command::Grant("vault:read".into())),
            (":stats", Command::Stats),
            (":reset", Command::Reset),
            (":reload", Command::Reload),
            (":load big.req", Command::Load("big.req".into())),
            (":record trace.jsonl", Command::Record("trace.jsonl".into())),
            (":stop", Command::Stop),
            (":quit", Command::Quit),
            (":q", Command::Quit),
        ];
        for (line, command) in cases {
            assert_eq!(parse_line(line), Ok(Line::Command(command)), "{line}");
        }
        for (line, expected) in [
            (":fuel 0", "greater than zero"),
            (":fuel -3", "not a fuel budget"),
            (":fuel 99999999999999999999999", "not a fuel budget"),
            (":grant", "usage: :grant PERM"),
            (":load", "usage: :load FILE"),
            (":record", "usage: :record FILE"),
            (":quit now", "takes no argument"),
            (":nope", "unknown command `:nope`"),
            (":", "unknown command"),
        ] {
            let error = parse_line(line).expect_err(line);
            assert!(error.contains(expected), "{line}: {error}");
        }
    }

    #[test]
    fn entries_continue_while_brackets_are_open() {
        assert!(continues("greet {"));
        assert!(continues("greet {\"a\": [1,"));
        assert!(continues("greet {\n  \"a\": [1,\n"));
        assert!(!continues("greet {\"a\": \"{[\"}"));
        assert!(continues("{\"jsonrpc\": \"2.0\","));
        assert!(!continues(":grant {"));
        assert!(!continues("greet }"));
        assert!(!continues("greet"));
        assert!(!continues("greet {oops"), "wrong at once: no continuation");
        assert!(!continues("greet {\n\n"), "a blank line ends the entry");
        assert!(!continues("big @{"));
    }

    #[test]
    fn completes_commands_intents_and_permissions() {
        let intents = vec!["greet".to_string(), "get".to_string(), "sum".to_string()];
        assert_eq!(complete(&intents, "g"), (0, vec!["greet".to_string(), "get".to_string()]));
        assert_eq!(complete(&intents, ""), (0, intents.clone()));
        assert_eq!(complete(&intents, ":st"), (0, vec![":stats".to_string(), ":stop".to_string()]));
        assert_eq!(
            complete(&intents, ":re"),
            (0, vec![":reset".to_string(), ":reload".to_string(), ":record".to_string()])
        );
        assert_eq!(complete(&intents, ":grant v"), (7, vec!["vault:read".to_string()]));
        assert_eq!(complete(&intents, ":grant  ne"), (8, vec!["network:".to_string()]));
        assert_eq!(complete(&intents, "greet {"), (0, Vec::new()));
    }
}
