//! `include/contour.h` is what cbindgen generates from the source now: the test fails when the
//! checked-in header differs (run `CONTOUR_BLESS=1 cargo test -p contour-c --test header` to
//! rewrite it, then commit it).

use std::path::Path;

#[test]
fn the_checked_in_header_is_the_generated_one() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml reads");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = crate_dir.join("include/contour.h");
    if std::env::var_os("CONTOUR_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("the header is written");
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "c-api/include/contour.h differs from what cbindgen generates now: run \
         `CONTOUR_BLESS=1 cargo test -p contour-c --test header` and commit the header"
    );
}
