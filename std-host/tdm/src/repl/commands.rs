//! The REPL's `:`-commands: each writes its text (on stdout on a terminal, else stderr) and, in
//! piped mode, one JSON line saying what it did.

use super::line::{parse_line, Command, Line, COMMANDS, MAX_ENTRY_BYTES};
use super::{memory, Flow, Repl};
use crate::table::Table;
use crate::terminal::textln;
use contour_core::{Policy, PolicyValue};
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::Path;
use tdm_sdk::declared::Declared;
use tdm_sdk::params;
use tdm_sdk::session::SessionError;

impl Repl {
    /// Runs a command.
    pub(super) fn command(&mut self, command: Command, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Flow> {
        let name = command.name();
        let mut text: Vec<u8> = Vec::new();
        let result: Result<Value, String> = match command {
            Command::Help => help(&mut text)?,
            Command::Intents => Ok(self.intents(&mut text)?),
            Command::Limits => self.limits(&mut text)?,
            Command::Fuel(None) => {
                let fuel = self.session.policy().fuel_per_intent;
                textln!(&mut text, "fuel per intent: {fuel}")?;
                Ok(json!({"fuelPerIntent": fuel}))
            }
            Command::Fuel(Some(fuel)) => self.set_fuel(fuel, &mut text)?,
            Command::Grant(perm) => self.grant(&perm, &mut text)?,
            Command::Stats => self.stats(&mut text)?,
            Command::Reset => {
                // A trace replays its intents in one instance relaunched only after a failure:
                // a reset it did not see would make its replay diverge, so it ends the recording.
                let stopped = self.stop_for_change(&mut text)?;
                self.session.discard_instance();
                textln!(&mut text, "instance discarded: the next intent starts a fresh one")?;
                Ok(json!({"recordingStopped": stopped}))
            }
            Command::Reload => self.reload(&mut text)?,
            Command::Load(path) => return self.load(&path, out, err),
            Command::Record(path) => self.record(&path, &mut text)?,
            Command::Stop => match self.end_recording() {
                Some(Ok(message)) => {
                    textln!(&mut text, "{message}")?;
                    Ok(json!({"stopped": true}))
                }
                Some(Err(message)) => Err(format!("the recording was lost: {message}")),
                None => Err("not recording (:record FILE starts)".to_string()),
            },
            Command::Quit => Ok(json!({})),
        };
        let info: &mut dyn Write = if self.terminal { &mut *out } else { &mut *err };
        info.write_all(&text)?;
        match result {
            Ok(fields) => self.done(out, name, fields)?,
            Err(message) => self.error(out, err, &message)?,
        }
        Ok(if name == "quit" { Flow::Quit } else { Flow::Continue })
    }

    /// `:limits`: the policy the plugin runs under.
    fn limits(&self, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        let fields = limit_fields(self.session.policy());
        for (name, value) in &fields {
            let shown =
                if *name == "max_memory_bytes" { memory(self.session.policy().max_memory_bytes) } else { plain(value) };
            textln!(text, "{name:<24} {shown}")?;
        }
        // The same fields for scripts, named as every other JSON document names them.
        Ok(Ok(Value::Object(fields.into_iter().map(|(name, value)| (camel(name), value)).collect())))
    }

    /// `:fuel N`: a new budget (the plugin is reloaded; within an approval).
    fn set_fuel(&mut self, fuel: u64, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        Ok(match self.session.set_fuel(fuel) {
            Ok(()) => {
                let stopped = self.stop_for_change(text)?;
                textln!(text, "fuel per intent: {fuel} (plugin reloaded; the next intent starts a fresh instance)")?;
                Ok(json!({"fuelPerIntent": fuel, "recordingStopped": stopped}))
            }
            Err(SessionError::AboveApproval(mut above)) => {
                above.flag = ":fuel";
                Err(format!("cannot set the fuel budget: {above}"))
            }
            Err(e) => Err(format!("cannot set the fuel budget: {e}")),
        })
    }

    /// `:grant PERM` (module files only).
    fn grant(&mut self, perm: &str, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        let before = self.session.grants().clone();
        Ok(match self.session.grant(perm) {
            // Already granted: nothing changes (the instance and a recording go on).
            Ok(message) if *self.session.grants() == before => {
                textln!(text, "{message}")?;
                let grants: Vec<String> = before.iter().map(ToString::to_string).collect();
                Ok(json!({"granted": grants, "recordingStopped": false}))
            }
            Ok(message) => {
                let stopped = self.stop_for_change(text)?;
                textln!(text, "{message}; the next intent starts a fresh instance")?;
                let grants: Vec<String> = self.session.grants().iter().map(ToString::to_string).collect();
                Ok(json!({"granted": grants, "recordingStopped": stopped}))
            }
            Err(message) => Err(message.to_string()),
        })
    }

    /// `:stats`: the figures of the whole session.
    fn stats(&self, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        let stats = &self.stats;
        let micros = stats.total_time.as_micros();
        textln!(
            text,
            "intents run: {} ({} failed, {} cancelled) | total fuel: {} | last peak memory: {} | total time: {}.{:03} ms",
            stats.intents,
            stats.failed,
            stats.cancelled,
            stats.total_fuel,
            stats.last_peak_memory.map_or_else(|| "-".to_string(), memory),
            micros / 1000,
            micros % 1000
        )?;
        Ok(Ok(json!({
            "intents": stats.intents, "failed": stats.failed, "cancelled": stats.cancelled,
            "totalFuel": stats.total_fuel, "lastPeakMemoryBytes": stats.last_peak_memory,
            "totalTimeUs": u64::try_from(micros).unwrap_or(u64::MAX),
        })))
    }

    /// `:reload`: the plugin read again (an installed one through its approval).
    fn reload(&mut self, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        Ok(match self.session.reload() {
            Ok(changed) => {
                let stopped = self.stop_for_change(text)?;
                let what = if changed { "the module changed" } else { "the module is unchanged" };
                textln!(text, "reloaded ({what}); the next intent starts a fresh instance")?;
                Ok(json!({"changed": changed, "hash": self.session.identity.hash, "recordingStopped": stopped}))
            }
            Err(e) => Err(format!("not reloaded, the session keeps the module it had: {e}")),
        })
    }

    /// `:record FILE`: starts recording into FILE from a fresh instance.
    fn record(&mut self, path: &str, text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
        if let Some(current) = &self.recording {
            return Ok(Err(format!("already recording into {} (:stop first)", current.display())));
        }
        let path = std::path::PathBuf::from(path);
        // Said now, not at :stop when the session's intents are already run.
        if let Err(e) = tdm_sdk::traces::check_trace_path(&path, &self.session.outputs()) {
            return Ok(Err(format!("cannot record: {e}")));
        }
        if let Err(why) = self.session.start_recording(&path) {
            return Ok(Err(format!("cannot record: {why}")));
        }
        textln!(text, "recording into {} (from a fresh instance; :stop writes the trace)", path.display())?;
        let shown = path.display().to_string();
        self.recording = Some(path);
        Ok(Ok(json!({"recording": shown})))
    }

    /// A change of policy, grants, module or instance ends a recording (a trace has one of each);
    /// whether one was running.
    fn stop_for_change(&mut self, text: &mut Vec<u8>) -> io::Result<bool> {
        match self.end_recording() {
            Some(Ok(message)) => {
                textln!(text, "{message}; recording stopped (a trace keeps one policy, grants, module and instance)")?;
                Ok(true)
            }
            Some(Err(message)) => {
                textln!(text, "the recording was lost: {message}")?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// `:intents`: the declared intents as a table; the JSON names them.
    fn intents(&self, text: &mut Vec<u8>) -> io::Result<Value> {
        let declared = self.session.declared();
        match declared {
            Declared::Malformed(why) => {
                textln!(text, "(the module's intent declaration is unusable: {why}; any METHOD is sent as is)")?;
            }
            _ if declared.intents().is_empty() => {
                let why = if self.session.is_installed() {
                    "its plugin.toml declares none, so none can be called"
                } else {
                    "no plugin.toml and no tdm.intents section; any METHOD is sent to the plugin as is"
                };
                textln!(text, "(no intents declared: {why})")?;
            }
            _ => {
                let mut table = Table::new(&["INTENT", "DESCRIPTION"]);
                for intent in declared.intents() {
                    table.row(vec![intent.name.clone(), intent.description.clone()]);
                }
                table.write(text)?;
                textln!(text, "(declared in {})", declared.source())?;
            }
        }
        let intents: Vec<Value> =
            declared.intents().iter().map(|i| json!({"name": i.name, "description": i.description})).collect();
        Ok(json!({"intents": intents, "source": declared.source()}))
    }

    /// `:load FILE`: runs the entry the file holds, at most a request's size.
    fn load(&mut self, path: &str, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Flow> {
        let limit = u64::from(self.session.policy().max_request_bytes).min(MAX_ENTRY_BYTES as u64);
        let bytes = match params::read_file(Path::new(path), limit) {
            Ok(bytes) => bytes,
            Err(e) => return self.error(out, err, &e.to_string()).map(|()| Flow::Continue),
        };
        let Ok(entry) = String::from_utf8(bytes) else {
            return self.error(out, err, &format!("{path} is not UTF-8 text")).map(|()| Flow::Continue);
        };
        match parse_line(&entry) {
            Ok(Line::Command(_)) | Ok(Line::Blank) => self
                .error(out, err, &format!("{path} must hold METHOD [params] or a JSON-RPC request"))
                .map(|()| Flow::Continue),
            Ok(_) => self.handle(&entry, out, err),
            Err(message) => self.error(out, err, &format!("{path}: {message}")).map(|()| Flow::Continue),
        }
    }
}

/// `:help`: what an entry can be and every command.
fn help(text: &mut Vec<u8>) -> io::Result<Result<Value, String>> {
    textln!(text, "METHOD [JSON params]   run an intent (params default to {{}}; may span lines)")?;
    textln!(text, "METHOD @FILE           run an intent with the params in FILE")?;
    textln!(text, "{{...}}                  send a raw JSON-RPC request as is")?;
    for (name, help) in COMMANDS {
        textln!(text, "{name:<22} {help}")?;
    }
    textln!(text, "Ctrl-C cancels a running intent; Tab completes commands and intents")?;
    Ok(Ok(json!({})))
}
/// Every field of the policy, one per line.
/// Every limit of `policy`, by its `Policy` field name.
fn limit_fields(policy: &Policy) -> Vec<(&'static str, Value)> {
    let json = |value| match value {
        PolicyValue::Number(n) => json!(n),
        PolicyValue::Compilation(mode) => json!(format!("{mode:?}")),
        PolicyValue::Switch(on) => json!(on),
    };
    Policy::FIELDS.iter().map(|field| (field.name, json((field.get)(policy)))).collect()
}

/// A JSON value as text, strings without their quotes.
fn plain(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_string)
}

/// `max_memory_bytes` -> `maxMemoryBytes`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Flow, Repl};
    use serde_json::Value;
    use tdm_sdk::session::{Session, SessionOptions};

    /// Answers every intent with `{"status":"completed","output":1}`.
    const ONE: &str = r#"(module (memory (export "memory") 1)
        (func (export "tdm_alloc") (param i32) (result i32) i32.const 1024)
        (func (export "tdm_free") (param i32 i32))
        (data (i32.const 16) "\21\00\00\00{\"status\":\"completed\",\"output\":1}")
        (func (export "tdm_plugin_execute_intent") (param i32 i32) (result i32) i32.const 16))"#;

    fn repl_of(wat: &str, terminal: bool) -> Repl {
        let bytes = wat::parse_str(wat).expect("valid WAT");
        let options = SessionOptions { seed: Some(1), ..SessionOptions::default() };
        Repl::new(Session::from_bytes("one", bytes, options).expect("loads"), terminal)
    }

    fn handle(repl: &mut Repl, line: &str) -> (Flow, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let flow = repl.handle(line, &mut out, &mut err).expect("in-memory writes succeed");
        (flow, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn terminal_mode_prints_pretty_outcomes_and_figures_on_stdout() {
        let mut repl = repl_of(ONE, true);
        let (_, out, err) = handle(&mut repl, "greet");
        assert!(out.starts_with("{\n  \"status\": \"completed\",\n  \"output\": 1\n}\n-- fuel "), "{out}");
        assert!(err.is_empty(), "{err}");
        let (_, out, err) = handle(&mut repl, ":bogus");
        assert_eq!(err, "error: unknown command `:bogus` (:help lists the commands)\n");
        assert!(out.is_empty(), "{out}");
        let (_, out, _) = handle(&mut repl, ":help");
        assert!(out.contains(":reload") && out.contains(":load"), "{out}");
    }

    #[test]
    fn terminal_mode_escapes_the_pretty_outcome() {
        let response = "{\"status\":\"completed\",\r\"output\":{\"csi\":\"\u{9b}31m\",\"rlo\":\"\u{202e}x\"}\r}";
        let mut data: String =
            u32::try_from(response.len()).unwrap().to_le_bytes().iter().map(|b| format!("\\{b:02x}")).collect();
        data.extend(response.bytes().map(|b| format!("\\{b:02x}")));
        let mut repl = repl_of(&ONE.replace(r#"\21\00\00\00{\"status\":\"completed\",\"output\":1}"#, &data), true);
        let (_, out, _) = handle(&mut repl, "greet");
        let outcome = out.split("\n-- fuel").next().unwrap_or_default();
        assert_eq!(outcome, "{\n  \"status\": \"completed\",\n  \"output\": {\n    \"csi\": \"\\u009b31m\",\n    \"rlo\": \"\\u202ex\"\n  }\n}");
        assert_eq!(serde_json::from_str::<Value>(outcome).ok(), serde_json::from_str::<Value>(response).ok());
    }

    #[test]
    fn piped_commands_print_one_json_line_each() {
        let mut repl = repl_of(ONE, false);
        for (line, command) in
            [(":stats", "stats"), (":reset", "reset"), (":limits", "limits"), (":intents", "intents")]
        {
            let (_, out, _) = handle(&mut repl, line);
            assert_eq!(out.lines().count(), 1, "{line}: {out}");
            let value: Value = serde_json::from_str(&out).expect("JSON");
            assert_eq!((value["status"].as_str(), value["command"].as_str()), (Some("ok"), Some(command)), "{out}");
            if command == "limits" {
                // Every limit, as the text lists them.
                assert_eq!(value["maxMemoryBytes"], 67_108_864, "{out}");
                assert_eq!(value["timeoutMs"], 5_000, "{out}");
                assert_eq!(value["compilation"], "LazyTranslation", "{out}");
            }
        }
        let (_, out, err) = handle(&mut repl, ":stop");
        let value: Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(value["status"], "error");
        assert!(err.contains("not recording"), "{err}");
    }
}
