//! The policy's fields are listed once (`Policy::FIELDS`) and what enumerates them derives from
//! that list: the checks, a trace's record, and the documentation's table.

use contour_core::{Policy, PolicyRecord, PolicyValue};

#[test]
fn the_limits_table_of_the_abi_document_names_every_policy_field() {
    let abi = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ABI.md")).expect("docs/ABI.md");
    let section = abi.split("## 6. Limits").nth(1).and_then(|rest| rest.split("\n## ").next()).expect("section 6");
    for field in Policy::FIELDS {
        assert!(section.contains(&format!("`{}`", field.name)), "docs/ABI.md section 6 does not name `{}`", field.name);
    }
}

#[test]
fn a_policy_survives_its_trace_record_field_by_field() {
    let policy = Policy {
        max_call_depth: 77,
        max_output_bytes: 5,
        compilation: contour_core::Compilation::Eager,
        ..Policy::embedded()
    };
    let back = PolicyRecord::of(&policy).policy().expect("fits");
    // An untraced field comes back as its default: `simd` does not change a replay, since the
    // trace's module loaded under its policy (it uses SIMD only where SIMD was on).
    assert_eq!(back, Policy { simd: Policy::default().simd, ..policy.clone() });
    for field in Policy::FIELDS.iter().filter(|field| field.traced) {
        assert_eq!((field.get)(&back), (field.get)(&policy), "{}", field.name);
    }
}

#[test]
fn every_field_at_zero_that_must_not_be_is_named_by_validate() {
    for field in Policy::FIELDS.iter().filter(|field| field.nonzero && field.traced) {
        let mut record = PolicyRecord::of(&Policy::default());
        // Zero one field through its record, the way a trace would name it.
        let text = serde_json::to_value(&record).expect("serializes");
        let mut object = text.as_object().expect("an object").clone();
        object.insert(field.name.to_string(), serde_json::json!(0));
        record = serde_json::from_value(serde_json::Value::Object(object)).expect("deserializes");
        let policy = record.policy().expect("fits");
        assert_eq!((field.get)(&policy), PolicyValue::Number(0));
        assert_eq!(policy.validate(), Err(contour_core::errors::PolicyError::Zero(field.name)), "{}", field.name);
    }
    // The fields a trace does not record; the one that must not be zero, zeroed directly.
    let untraced: Vec<&str> = Policy::FIELDS.iter().filter(|field| !field.traced).map(|field| field.name).collect();
    assert_eq!(untraced, ["max_request_depth", "simd"]);
    let policy = Policy { max_request_depth: 0, ..Policy::default() };
    assert_eq!(policy.validate(), Err(contour_core::errors::PolicyError::Zero("max_request_depth")));
}
