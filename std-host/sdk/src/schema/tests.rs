//! The schema checks and their budget.

use super::*;
use serde_json::json;

fn schema(value: Value) -> Schema {
    Schema::new(&value).unwrap()
}

fn why(schema: &Schema, instance: Value) -> String {
    schema.validate(&instance).unwrap_err().to_string()
}

#[test]
fn applies_the_keywords_agents_meet() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
            "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10, "multipleOf": 2},
            "tags": {"type": "array", "items": {"enum": ["a", "b", 1]}, "uniqueItems": true, "maxItems": 3},
            "mode": {"$ref": "#/$defs/mode"},
            "pair": {"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false}
        },
        "required": ["name"],
        "additionalProperties": false,
        "$defs": {"mode": {"oneOf": [{"const": "fast"}, {"const": "slow"}]}}
    }));
    assert_eq!(
        s.validate(&json!({"name": "ada", "count": 4, "tags": ["a", 1.0], "mode": "fast", "pair": ["x", 2]})),
        Ok(())
    );
    assert!(why(&s, json!({})).contains("lacks the required member `name`"));
    assert!(why(&s, json!({"name": 7})).starts_with("at `/name`: expected string, found a number"));
    assert!(why(&s, json!({"name": ""})).contains("shorter than 1"));
    assert!(why(&s, json!({"name": "héllo!"})).contains("longer than 5"));
    assert!(why(&s, json!({"name": "Ada"})).contains("pattern"));
    assert!(why(&s, json!({"name": "a", "count": 3})).contains("multipleOf"));
    assert!(why(&s, json!({"name": "a", "count": 10})).contains("exclusiveMaximum"));
    assert!(why(&s, json!({"name": "a", "count": true})).contains("expected integer, found a boolean"));
    let integer = schema(json!({"type": "integer"}));
    assert_eq!(integer.validate(&json!(2.0)), Ok(()));
    assert!(why(&integer, json!(2.5)).contains("expected integer, found a number"));
    assert!(why(&s, json!({"name": "a", "tags": ["a", "a"]})).contains("unique"));
    assert!(why(&s, json!({"name": "a", "tags": ["c"]})).contains("none of the values"));
    assert!(why(&s, json!({"name": "a", "mode": "medium"})).contains("none of the alternatives"));
    assert!(why(&s, json!({"name": "a", "pair": ["x", 2, 3]})).starts_with("at `/pair/2`"));
    assert!(why(&s, json!({"name": "a", "extra": 1})).contains("`extra`"));
}

#[test]
fn the_draft_07_forms_apply_too() {
    let s = schema(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "number"}},
        "items": [{"$ref": "#/definitions/n"}],
        "additionalItems": {"type": "string"}
    }));
    assert_eq!(s.validate(&json!([1, "x"])), Ok(()));
    assert!(why(&s, json!(["1"])).starts_with("at `/0`"));
    assert!(why(&s, json!([1, 2])).starts_with("at `/1`"));
    let conditional =
        schema(json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}}));
    assert_eq!(conditional.validate(&json!({"a": 1, "b": 2})), Ok(()));
    assert!(why(&conditional, json!({"a": 1})).contains("`b`"));
    assert!(why(&conditional, json!({})).contains("`c`"));
    let keys_any_order = schema(json!({"const": {"a": 1, "b": [1, 2]}}));
    assert_eq!(keys_any_order.validate(&json!({"b": [1.0, 2], "a": 1})), Ok(()));
}

#[test]
fn refuses_what_it_would_not_apply_faithfully() {
    for (bad, expected) in [
        (json!(7), "neither an object nor a boolean"),
        (json!({"type": "text"}), "must name types"),
        (json!({"properties": {"a": 1}}), "`#/properties/a` is neither"),
        (json!({"$ref": "https://example.com/s.json"}), "another document"),
        (json!({"$ref": "#/$defs/missing"}), "does not have"),
        (json!({"unevaluatedProperties": false}), "uses `unevaluatedProperties`"),
        (json!({"$dynamicRef": "#x"}), "uses `$dynamicRef`"),
        (json!({"pattern": "(?<=a)b"}), "pattern this host cannot apply"),
        (json!({"pattern": "a{1000}{1000}{1000}"}), "pattern this host cannot apply"),
        (json!({"minLength": -1}), "non-negative integer"),
        (json!({"anyOf": []}), "must not be empty"),
        (json!({"$schema": "http://json-schema.org/draft-04/schema#"}), "dialect"),
        (json!({"properties": {"a": {"$id": "other"}}}), "uses `$id`"),
    ] {
        let error = Schema::new(&bad).unwrap_err().to_string();
        assert!(error.contains(expected), "{bad}: {error}");
    }
    let huge = json!({"description": "x".repeat(MAX_SCHEMA_BYTES)});
    assert!(matches!(Schema::new(&huge), Err(SchemaError::TooLarge(_))));
    let mut deep = json!({});
    for _ in 0..=MAX_SCHEMA_DEPTH {
        deep = json!({"not": deep});
    }
    assert_eq!(Schema::new(&deep).unwrap_err(), SchemaError::TooDeep);
}

#[test]
fn a_schema_built_to_blow_up_ends_within_its_budget() {
    // Each level tries both alternatives of an instance that fails at the bottom: 2^depth
    // applications without a budget.
    let exponential = schema(json!({
        "anyOf": [
            {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]},
            {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}
        ]
    }));
    let mut instance = json!(0);
    for _ in 0..60 {
        instance = json!({"a": instance});
    }
    assert_eq!(exponential.validate(&instance), Err(Mismatch::TooCostly));
    // A reference to itself that never moves into the instance nests until the bound.
    let endless = schema(json!({"$ref": "#"}));
    assert_eq!(endless.validate(&json!(1)), Err(Mismatch::TooCostly));
    // A pattern that backtracks exponentially in a backtracking engine is linear here.
    let nested = schema(json!({"pattern": "^(a+)+$"}));
    let text = format!("{}!", "a".repeat(10_000));
    assert!(why(&nested, json!(text)).contains("pattern"));
    // Unique items are sorted, not compared pairwise: 100,000 distinct items fit the budget.
    let unique = schema(json!({"uniqueItems": true}));
    let items: Vec<Value> = (0..100_000).map(|n| json!(n)).collect();
    assert_eq!(unique.validate(&Value::Array(items)), Ok(()));
}
