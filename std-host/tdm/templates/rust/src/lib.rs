//! {{name}}: a Contour plugin. `greet {name}` answers `{"greeting": "Hello, NAME!"}`.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::{format, string::String};
use serde::{Deserialize, Serialize};
use tdm_plugin::Failure;

/// The params of `greet`.
#[derive(Deserialize)]
struct GreetParams {
    name: String,
}

/// The output of `greet`.
#[derive(Serialize)]
struct Greeting {
    greeting: String,
}

/// `greet {name}`: a greeting; an empty name is the plugin's own failed outcome.
fn greet(params: GreetParams) -> Result<Greeting, Failure> {
    let name = params.name.trim();
    if name.is_empty() {
        return Err(
            Failure::new("empty_name", "`name` is empty.").hint("Pass a non-empty `name`, e.g. {\"name\":\"Ada\"}.")
        );
    }
    Ok(Greeting { greeting: format!("Hello, {name}!") })
}

// The intents: each name, its handler, and what `tdm inspect`, `tdm repl` and MCP clients show
// (written into the module's `tdm.intents` custom section). Add an intent: a function
// `fn(P) -> Result<O, Failure>` and one more entry here.
tdm_plugin::plugin! {
    "greet" => greet {
        title: "Greet someone",
        description: "Answers {\"greeting\": \"Hello, NAME!\"} for params {\"name\": NAME}.",
        params: r#"{"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}"#,
        result: r#"{"type": "object", "properties": {"greeting": {"type": "string"}}, "required": ["greeting"]}"#,
    },
}
