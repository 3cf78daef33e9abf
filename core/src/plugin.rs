//! Loading: a `Runtime` (engine plus the linker of every host import, built once and shared)
//! and a `Plugin`, a module that passed every load-time check: the policy is usable, the size
//! and parse-time limits hold, the module parses and validates, its imports are on the
//! allowlist and its exports fit the profile. Nothing of the module runs here.

use crate::allowlist;
use crate::check::{Inspection, Profile};
use crate::meter::BYTES_PER_FUEL;
use crate::module_limits;
use crate::policy::{Compilation, Policy, PolicyValue};
use crate::reason::{BlockedReason, Failure};
use crate::simd;
use crate::state::HostState;
use alloc::format;
use alloc::sync::Arc;
use wasmi::{CompilationMode, Config, CustomFuelCosts, Engine, Linker, Module};

/// An engine and the linker of every host import (WASI and the host intents), built once and
/// shared by every plugin loaded on it: loading a plugin then costs only parsing, checking
/// and compiling its module. The engine settings (compilation mode, call-depth limit, SIMD) come
/// from the policy it was built for; a plugin loaded on it must ask for the same.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<HostState>,
    compilation: Compilation,
    max_call_depth: usize,
    simd: bool,
}

impl Runtime {
    /// A runtime with the engine settings of `policy`.
    pub fn new(policy: &Policy) -> Result<Self, Failure> {
        usable(policy)?;
        let engine = engine_for(policy);
        let mut linker = Linker::new(&engine);
        allowlist::link(&mut linker)
            .map_err(|e| Failure::new(BlockedReason::LinkFailed, format!("Defining the host imports failed: {e}.")))?;
        Ok(Self {
            engine,
            linker,
            compilation: policy.compilation,
            max_call_depth: policy.max_call_depth,
            simd: policy.simd,
        })
    }

    /// Whether a plugin under `policy` can run on this runtime's engine.
    pub fn fits(&self, policy: &Policy) -> bool {
        policy.compilation == self.compilation
            && policy.max_call_depth == self.max_call_depth
            && policy.simd == self.simd
    }

    fn check_fits(&self, policy: &Policy) -> Result<(), Failure> {
        if self.fits(policy) {
            return Ok(());
        }
        Err(Failure::new(
            BlockedReason::InvalidPolicy,
            format!(
                "It asks for {:?} compilation, call depth {} and SIMD {}; the runtime was built for {:?}, {} and \
                 SIMD {}.",
                policy.compilation,
                policy.max_call_depth,
                PolicyValue::Switch(policy.simd),
                self.compilation,
                self.max_call_depth,
                PolicyValue::Switch(self.simd)
            ),
        ))
    }
}

/// Builds the engine configuration a policy implies: fuel on, compilation fuel off (so fuel is
/// deterministic in every compilation mode), the call-depth limit, no multi-memory.
fn engine_for(policy: &Policy) -> Engine {
    let mut config = Config::default();
    config
        .consume_fuel(true)
        .fuel_cost(CustomFuelCosts {
            bytes_copied_per_fuel: BYTES_PER_FUEL as u32,
            fuel_per_bytes_translated: 0,
            fuel_per_bytes_validated: 0,
        })
        .compilation_mode(match policy.compilation {
            Compilation::Lazy => CompilationMode::Lazy,
            Compilation::LazyTranslation => CompilationMode::LazyTranslation,
            Compilation::Eager => CompilationMode::Eager,
        })
        .set_max_recursion_depth(policy.max_call_depth)
        .wasm_multi_memory(false);
    // Relaxed SIMD's results may differ by CPU: never, whatever the policy says.
    #[cfg(feature = "simd")]
    config.wasm_simd(policy.simd && simd::BUILT_WITH_SIMD).wasm_relaxed_simd(false);
    Engine::new(&config)
}

/// A policy whose limits cannot be enforced is refused before any module is parsed under it.
fn usable(policy: &Policy) -> Result<(), Failure> {
    policy.validate().map_err(|e| Failure::new(BlockedReason::InvalidPolicy, format!("{e}.")))
}

/// Why wasmi refused `bytes`: that it uses SIMD, which this runtime does not run, when it does;
/// else wasmi's own words.
fn refused_module(error: &wasmi::Error, bytes: &[u8], policy: &Policy) -> Failure {
    if !(simd::BUILT_WITH_SIMD && policy.simd) && simd::uses_simd(bytes) {
        let why = simd::SIMD_UNAVAILABLE.unwrap_or("the policy turns off");
        return Failure::new(BlockedReason::InvalidModule, format!("It uses SIMD (v128 instructions), which {why}."));
    }
    invalid_module(error)
}

fn invalid_module(error: &wasmi::Error) -> Failure {
    Failure::new(BlockedReason::InvalidModule, format!("{error}."))
}

/// A module that passed every load-time check, ready to launch any number of times.
pub struct Plugin {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) module: Module,
    pub(crate) policy: Policy,
    inspection: Inspection,
}

impl Plugin {
    /// Parses `bytes` as a plugin (marketplace profile) and runs every load-time check, on a
    /// runtime of its own.
    pub fn load(bytes: &[u8], policy: Policy) -> Result<Self, Failure> {
        Self::load_as(bytes, policy, Profile::Marketplace)
    }

    /// Parses `bytes` for `profile` on a runtime of its own and runs every load-time check;
    /// the first failure found (imports, then exports, then memory) is the error.
    pub fn load_as(bytes: &[u8], policy: Policy, profile: Profile) -> Result<Self, Failure> {
        let runtime = Arc::new(Runtime::new(&policy)?);
        Self::load_on(&runtime, bytes, policy, profile)
    }

    /// Parses `bytes` for `profile` on a shared `runtime` (which must fit `policy`) and runs
    /// every load-time check; the first failure found is the error.
    pub fn load_on(runtime: &Arc<Runtime>, bytes: &[u8], policy: Policy, profile: Profile) -> Result<Self, Failure> {
        usable(&policy)?;
        runtime.check_fits(&policy)?;
        let (module, inspection) = Self::parse(&runtime.engine, bytes, &policy, profile)?;
        if let Err(failure) = inspection.verdict() {
            return Err(failure.clone());
        }
        Ok(Self { runtime: Arc::clone(runtime), module, policy, inspection })
    }

    /// Parses and checks `bytes` without deciding: the full report, including every failure.
    /// Function bodies are fully validated here whatever the compilation mode.
    pub fn inspect(bytes: &[u8], policy: &Policy, profile: Profile) -> Result<Inspection, Failure> {
        usable(policy)?;
        let engine = engine_for(policy);
        let (_, inspection) = Self::parse(&engine, bytes, policy, profile)?;
        Module::validate(&engine, bytes).map_err(|e| refused_module(&e, bytes, policy))?;
        Ok(inspection)
    }

    /// The size limit, the parse-time limits, then wasmi's parse, then the checks.
    fn parse(
        engine: &Engine,
        bytes: &[u8],
        policy: &Policy,
        profile: Profile,
    ) -> Result<(Module, Inspection), Failure> {
        if bytes.len() > policy.max_module_bytes {
            return Err(Failure::new(
                BlockedReason::ModuleTooLarge,
                format!("It has {} bytes; the limit is {}.", bytes.len(), policy.max_module_bytes),
            ));
        }
        module_limits::check(bytes)?;
        let module = Module::new(engine, bytes).map_err(|e| refused_module(&e, bytes, policy))?;
        let inspection = Inspection::of(&module, policy, profile);
        Ok((module, inspection))
    }

    /// The load-time report.
    pub fn inspection(&self) -> &Inspection {
        &self.inspection
    }

    /// The policy this plugin runs under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The runtime this plugin was loaded on.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }
}

#[cfg(test)]
mod tests {
    use super::Plugin;
    use crate::policy::Policy;
    use crate::reason::BlockedReason;
    use crate::simd::{uses_simd, BUILT_WITH_SIMD, SIMD_UNAVAILABLE};
    use alloc::string::ToString;

    fn module(wat: &str) -> alloc::vec::Vec<u8> {
        wat::parse_str(wat).expect("the fixture compiles")
    }

    /// A module with one SIMD function (it needs no ABI exports to show how load decides).
    const SIMD: &str = "(module (memory (export \"memory\") 1) \
        (func (export \"lanes\") (result i32) (i32x4.extract_lane 1 (i32x4.add (v128.const i32x4 1 2 3 4) (v128.const i32x4 5 6 7 8)))))";

    #[test]
    fn a_simd_module_is_parsed_only_where_simd_is_on_and_refused_by_name_elsewhere() {
        let wasm = module(SIMD);
        let refused = |policy: Policy| match Plugin::load(&wasm, policy) {
            Err(failure) if failure.reason == BlockedReason::InvalidModule => Some(failure.message().to_string()),
            _ => None,
        };
        // Parsed where the build has SIMD and the policy allows it (it then fails the ABI check,
        // a later step); refused at parse, saying why, everywhere else.
        let default = refused(Policy::default());
        if BUILT_WITH_SIMD {
            assert_eq!(default, None);
        } else {
            let message = default.expect("refused");
            assert!(message.contains("SIMD") && message.contains(SIMD_UNAVAILABLE.unwrap_or("-")), "{message}");
        }
        let off = refused(Policy { simd: false, ..Policy::default() }).expect("refused with SIMD off");
        assert!(off.contains("It uses SIMD (v128 instructions)"), "{off}");
        // The embedded profile turns it off.
        assert!(refused(Policy::embedded()).is_some());
    }

    #[test]
    fn relaxed_simd_is_refused_even_where_simd_is_on() {
        // Relaxed SIMD's results may differ by CPU: a deterministic runtime never runs it.
        let wasm = module(
            "(module (func (result v128) (i8x16.relaxed_swizzle (v128.const i64x2 0 0) (v128.const i64x2 0 0))))",
        );
        let failure = Plugin::load(&wasm, Policy::default()).err().expect("refused");
        assert_eq!(failure.reason, BlockedReason::InvalidModule, "{}", failure.message());
        assert!(uses_simd(&wasm));
    }
}
