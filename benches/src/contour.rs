//! The Contour side of each benchmark: warm sandboxes of the fixtures, and the `log` host the host-call fixture
//! talks to.

use contour_core::{
    BlockedReason, CallContext, Compilation, HostAnswer, HostCall, HostIntents, Permissions, Plugin, Policy, Profile,
    Runtime, Sandbox, VirtualEnvironment,
};
use std::hint::black_box;
use std::sync::Arc;

/// A sandbox of `wasm` under the default policy in `compilation` mode (not launched yet).
pub fn sandbox(wasm: &[u8], compilation: Compilation) -> Sandbox {
    let plugin = Plugin::load(wasm, Policy { compilation, ..Policy::default() }).expect("the fixture loads");
    Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
}

/// The default policy in `compilation` mode.
pub fn policy(compilation: Compilation) -> Policy {
    Policy { compilation, ..Policy::default() }
}

/// A runtime (engine and linker) for plugins in `compilation` mode, built once and shared, as a host does.
pub fn runtime(compilation: Compilation) -> Arc<Runtime> {
    Arc::new(Runtime::new(&policy(compilation)).expect("the default policy is usable"))
}

/// Cold start on a shared runtime: load `wasm` (every load-time check), create a sandbox and launch it.
pub fn cold_start(runtime: &Arc<Runtime>, wasm: &[u8], compilation: Compilation) -> Sandbox {
    let plugin = Plugin::load_on(runtime, wasm, policy(compilation), Profile::Marketplace).expect("the fixture loads");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)));
    sandbox.launch().expect("the fixture launches");
    sandbox
}

/// A launched sandbox of `wasm` under the default policy.
pub fn warm_sandbox(wasm: &[u8]) -> Sandbox {
    let mut sandbox = sandbox(wasm, Compilation::default());
    sandbox.launch().expect("the fixture launches");
    sandbox
}

/// A host that answers every `log` with `{"logged": true}` (and refuses anything else).
pub struct LogHost;

impl HostIntents for LogHost {
    fn call(&mut self, call: &HostCall, _context: &CallContext) -> HostAnswer {
        match call {
            HostCall::Log { message, .. } => {
                black_box(message);
                HostAnswer::ok(serde_json::json!({ "logged": true }))
            }
            _ => HostAnswer::failed(BlockedReason::UnknownHostMethod, "only log"),
        }
    }
}

/// A launched sandbox of the host-call fixture `wasm` whose host calls [`LogHost`].
pub fn log_sandbox(wasm: &[u8]) -> Sandbox {
    let plugin = Plugin::load(wasm, Policy::default()).expect("the host-call fixture loads");
    let mut sandbox = Sandbox::new(Arc::new(plugin), Box::new(VirtualEnvironment::new(7)))
        .with_host(Box::new(LogHost), Permissions::default());
    sandbox.launch().expect("the host-call fixture launches");
    sandbox
}
