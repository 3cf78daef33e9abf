//! extism-greet: `greet {name}` answers `{"greeting": "Hello, NAME!"}` (the name trimmed), as
//! examples/rust/hello does, written the way an Extism plugin author writes it: serde types through
//! extism-pdk's `Json` in and out. An empty name is an error, as hello's own failed outcome.

use extism_pdk::{plugin_fn, FnResult, Json, WithReturnCode};
use serde::{Deserialize, Serialize};

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

/// `greet {name}`: a greeting.
#[plugin_fn]
pub fn greet(Json(params): Json<GreetParams>) -> FnResult<Json<Greeting>> {
    let name = params.name.trim();
    if name.is_empty() {
        return Err(WithReturnCode::new(extism_pdk::Error::msg("`name` is empty."), 1));
    }
    Ok(Json(Greeting { greeting: format!("Hello, {name}!") }))
}
