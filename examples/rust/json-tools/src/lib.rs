//! json-tools: transforms over a JSON array given as params.
//!
//! - `select {items, fields}`: each item (an object) keeps only the named fields (those it has).
//! - `filter {items, field, equals}`: the items whose `field` equals `equals` (JSON equality).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::{string::String, vec::Vec};
use serde::Deserialize;
use tdm_plugin::serde_json::{Map, Value};
use tdm_plugin::Failure;

/// The params of `select`.
#[derive(Deserialize)]
struct SelectParams {
    items: Vec<Map<String, Value>>,
    fields: Vec<String>,
}

/// The params of `filter`.
#[derive(Deserialize)]
struct FilterParams {
    items: Vec<Value>,
    field: String,
    equals: Value,
}

/// At most this many items per call, so one request cannot make the plugin spin.
const MAX_ITEMS: usize = 100_000;

fn too_many(n: usize) -> Failure {
    Failure::new("too_many_items", alloc::format!("{n} items; at most {MAX_ITEMS} per call."))
        .hint("Split the array into smaller calls.")
}

/// `select {items, fields}`: the projected array.
fn select(params: SelectParams) -> Result<Vec<Map<String, Value>>, Failure> {
    if params.items.len() > MAX_ITEMS {
        return Err(too_many(params.items.len()));
    }
    Ok(params
        .items
        .into_iter()
        .map(|mut item| {
            let mut projected = Map::new();
            for field in &params.fields {
                if let Some(value) = item.remove(field) {
                    projected.insert(field.clone(), value);
                }
            }
            projected
        })
        .collect())
}

/// `filter {items, field, equals}`: the matching items, in order.
fn filter(params: FilterParams) -> Result<Vec<Value>, Failure> {
    if params.items.len() > MAX_ITEMS {
        return Err(too_many(params.items.len()));
    }
    Ok(params.items.into_iter().filter(|item| item.get(&params.field) == Some(&params.equals)).collect())
}

tdm_plugin::plugin! { "select" => select, "filter" => filter }
