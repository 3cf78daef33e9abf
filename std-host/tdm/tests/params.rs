//! `--params` takes JSON, `@FILE` or `-` (stdin) up to the 1 MiB request limit, through the
//! built binary, for `tdm run` and `tdm call`: params far past what an argument list carries
//! arrive intact, and params past the limit or not JSON are refused with the source named.

#[path = "support/tdm.rs"]
mod support;

use serde_json::{json, Value};
use support::{echo, install_approved, json, package, stderr, tdm, text, write};

/// Params of about 900 KiB: more than Linux passes in one argument (128 KiB), less than a
/// request may be (1 MiB).
fn big_params() -> (Value, String) {
    let numbers: Vec<u32> = (0..150_000).collect();
    let params = json!({"numbers": numbers, "note": "é日🦀"});
    let text = serde_json::to_string(&params).unwrap();
    assert!(text.len() > 800 * 1024 && text.len() < 1000 * 1024, "{}", text.len());
    (params, text)
}

#[test]
fn run_takes_large_params_from_a_file_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let (params, text) = big_params();
    let file = write(dir.path(), "big.json", &text);
    let from_file = tdm(dir.path(), &["run", &echo(), "greet", "--params", &format!("@{file}")], b"");
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    assert_eq!(json(&from_file)["output"], params);
    let from_stdin = tdm(dir.path(), &["run", &echo(), "greet", "--params", "-"], text.as_bytes());
    assert_eq!(from_stdin.status.code(), Some(0), "{}", stderr(&from_stdin));
    assert_eq!(json(&from_stdin)["output"], params);
}

#[test]
fn call_takes_params_from_a_file_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let module = std::fs::read_to_string(echo()).unwrap();
    install_approved(&ws, &package(dir.path(), "pkg", "echo", &module, &[("greet", "echo")], ""));
    let (params, text) = big_params();
    let file = write(dir.path(), "big.json", &text);
    let from_file = tdm(&ws, &["call", "echo", "greet", "--params", &format!("@{file}")], b"");
    assert_eq!(json(&from_file)["output"], params, "{}", stderr(&from_file));
    let from_stdin = tdm(&ws, &["call", "echo", "greet", "--params", "-"], text.as_bytes());
    assert_eq!(json(&from_stdin)["output"], params, "{}", stderr(&from_stdin));
}

#[test]
fn params_past_the_request_limit_or_not_json_are_refused_naming_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let huge = write(dir.path(), "huge.json", format!("[{}1]", "1,".repeat(600_000)));
    let bad = write(dir.path(), "bad.json", "{\"a\": 1,\n oops}");
    let cases: [(&[&str], &[u8], &str); 5] = [
        (
            &["--params", &format!("@{huge}")],
            b"",
            "has 1200003 bytes; a request (params included) may have at most 1048576",
        ),
        (&["--params", "-"], &vec![b' '; 2 << 20], "params from standard input are larger than a request may be"),
        (&["--params", &format!("@{bad}")], b"", "params file"),
        (&["--params", "@/nonexistent/p.json"], b"", "/nonexistent/p.json"),
        (&["--params", "{oops"], b"", "the --params are not valid JSON"),
    ];
    for (flags, stdin, expected) in cases {
        let mut args = vec!["run", echo().leak() as &str, "greet"];
        args.extend_from_slice(flags);
        let out = tdm(dir.path(), &args, stdin);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{flags:?}");
        assert!(stderr(&out).contains(expected), "{flags:?}: {}", stderr(&out));
    }
    let bad_line = tdm(dir.path(), &["run", &echo(), "greet", "--params", &format!("@{bad}")], b"");
    assert!(stderr(&bad_line).contains("line 2 column 2"), "the parser's position is kept: {}", stderr(&bad_line));
}

#[test]
fn params_reach_the_plugin_byte_for_byte_from_every_source() {
    let dir = tempfile::tempdir().unwrap();
    // A number past u64, one past f64's precision, keys out of order, an escape: parsing and
    // writing again would round the numbers (1.2345678901234568e+29, 1.0), sort the keys and
    // unescape the string.
    let exact = r#"{"z":123456789012345678901234567890,"a":1.0000000000000000001,"s":"\u00e9"}"#;
    let file = write(dir.path(), "exact.json", exact);
    for (params, stdin) in [(exact.to_string(), ""), (format!("@{file}"), ""), ("-".to_string(), exact)] {
        let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", &params, "-q"], stdin.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let printed = text(&out);
        assert!(printed.contains(&format!(r#""output":{exact}"#)), "{params}: {printed}");
    }
}

#[test]
fn params_that_are_not_json_get_a_hint_with_the_quoted_form() {
    let dir = tempfile::tempdir().unwrap();
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", "hello"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("not valid JSON"), "{err}");
    assert!(err.contains("hint: params are JSON") && err.contains(r#"--params '"hello"'"#), "{err}");
    assert!(err.contains("--input"), "{err}");
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--params", "hello", "--json"], b"");
    let error = json(&out);
    assert_eq!(error["error"], "usage");
    assert!(error["hint"].as_str().unwrap_or_default().contains(r#"--params '"hello"'"#), "{error}");
}

#[test]
fn input_sends_raw_text_as_a_json_string_and_excludes_params() {
    let dir = tempfile::tempdir().unwrap();
    let raw = "hello \"world\" -- {not json}";
    let out = tdm(dir.path(), &["run", &echo(), "greet", "--input", raw], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["output"], json!(raw));
    let both = tdm(dir.path(), &["run", &echo(), "greet", "--input", "a", "--params", "{}"], b"");
    assert_eq!(both.status.code(), Some(2), "{}", text(&both));
    assert!(stderr(&both).contains("cannot be used with"), "{}", stderr(&both));
    // call takes it too.
    let ws = dir.path().join("ws");
    let module = std::fs::read_to_string(echo()).unwrap();
    install_approved(&ws, &package(dir.path(), "pkg", "echo", &module, &[("greet", "echo")], ""));
    let out = tdm(&ws, &["call", "echo", "greet", "--input", "-dash first"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&out)["output"], json!("-dash first"));
}
