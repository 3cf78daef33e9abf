//! `greet` requests of one size in the member orders and spacings other JSON-RPC writers use, for
//! the SDKs' key-order fuel tests (issue 25: an SDK's envelope cost may not depend on them).
#![allow(dead_code)] // Each test file uses part of it.

/// How a request's envelope is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The host's own order, no spaces: `{"id":1,"jsonrpc":"2.0","method":…,"params":…}`.
    Host,
    /// `jsonrpc` first, the order most JSON-RPC writers use.
    JsonrpcFirst,
    /// `id` last, after the params.
    IdLast,
    /// `jsonrpc` first with a space after every `:` and `,`, as Python's `json.dumps` writes it.
    Spaced,
    /// `jsonrpc` first, pretty-printed: a newline and indentation before every member.
    Pretty,
}

/// Every shape, the host's first.
pub const SHAPES: [Shape; 5] = [Shape::Host, Shape::JsonrpcFirst, Shape::IdLast, Shape::Spaced, Shape::Pretty];

/// How much more than the host order's fuel a shape may cost: 5% for every order and for
/// `json.dumps` spacing; 15% pretty-printed (measured 10.5% for the Rust SDK at 128 B: the
/// newlines and indentation inside the params cost the params reader too).
pub fn bound(shape: Shape) -> f64 {
    match shape {
        Shape::Pretty => 1.15,
        _ => 1.05,
    }
}

/// A `greet` request of exactly `size` bytes in `shape` (the name padded with `x`).
pub fn greet_request(shape: Shape, size: usize) -> Vec<u8> {
    let build = |pad: usize| {
        let name = "x".repeat(pad);
        match shape {
            Shape::Host => format!(r#"{{"id":1,"jsonrpc":"2.0","method":"greet","params":{{"name":"{name}"}}}}"#),
            Shape::JsonrpcFirst => {
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"greet","params":{{"name":"{name}"}}}}"#)
            }
            Shape::IdLast => format!(r#"{{"jsonrpc":"2.0","method":"greet","params":{{"name":"{name}"}},"id":1}}"#),
            Shape::Spaced => {
                format!(r#"{{"jsonrpc": "2.0", "id": 1, "method": "greet", "params": {{"name": "{name}"}}}}"#)
            }
            Shape::Pretty => format!(
                "{{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"method\": \"greet\",\n  \"params\": {{\n    \"name\": \"{name}\"\n  }}\n}}"
            ),
        }
        .into_bytes()
    };
    let request = build(size.saturating_sub(build(0).len()));
    assert_eq!(request.len(), size, "{shape:?}");
    request
}

/// Checks that each shape's fuel (from `fuel_of`, which runs one warm greet of the request it is
/// given) is within its [`bound`] of the host order's at `size` bytes; returns the fuel per shape.
pub fn assert_order_free(name: &str, size: usize, mut fuel_of: impl FnMut(&[u8]) -> u64) -> Vec<(Shape, u64)> {
    let fuel: Vec<(Shape, u64)> = SHAPES.iter().map(|&shape| (shape, fuel_of(&greet_request(shape, size)))).collect();
    let host = fuel[0].1;
    println!("{name} at {size} B: {fuel:?}");
    for &(shape, used) in &fuel {
        assert!(
            used as f64 <= bound(shape) * host as f64,
            "{name}: a {size}-byte greet written {shape:?} costs {used} fuel, over {}x the host order's {host}",
            bound(shape)
        );
    }
    fuel
}
