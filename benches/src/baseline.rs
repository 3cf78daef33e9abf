//! The bare-wasmi baselines every Contour figure is compared with: an instance of a fixture with no imports, and
//! the raw transport floor of one intent (typed calls and memory copies, no JSON, no checks).

use wasmi::{CompilationMode, Config, Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

/// A bare wasmi engine with fuel metering on or off, in compilation `mode`.
pub fn wasmi_engine(mode: CompilationMode, fuel: bool) -> Engine {
    let mut config = Config::default();
    config.consume_fuel(fuel).compilation_mode(mode);
    Engine::new(&config)
}

/// A bare wasmi instance of a fixture (none imports anything) on `engine`: compile, store, instantiate. With fuel
/// on, the store gets a budget no workload reaches.
pub fn wasmi_instance_on(engine: &Engine, wasm: &[u8]) -> (Store<()>, Instance) {
    let module = Module::new(engine, wasm).expect("the fixture compiles");
    let mut store = Store::new(engine, ());
    // Fails only when fuel metering is off, where there is nothing to set.
    let _ = store.set_fuel(u64::MAX / 2);
    let instance = Linker::new(engine).instantiate_and_start(&mut store, &module).expect("the fixture instantiates");
    (store, instance)
}

/// A bare wasmi instance of a fixture on an engine of its own.
pub fn wasmi_instance(wasm: &[u8], mode: CompilationMode, fuel: bool) -> (Store<()>, Instance) {
    wasmi_instance_on(&wasmi_engine(mode, fuel), wasm)
}

/// The raw floor of one intent: `tdm_alloc`, write the request, call the intent, read `[len][bytes]`, `tdm_free`
/// both regions; plain typed calls, fuel off.
pub struct RawEcho {
    store: Store<()>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    free: TypedFunc<(i32, i32), ()>,
    execute: TypedFunc<(i32, i32), i32>,
}

impl RawEcho {
    /// A warm instance of `wasm` (which must import nothing).
    pub fn new(wasm: &[u8]) -> Self {
        let (store, instance) = wasmi_instance(wasm, CompilationMode::Lazy, false);
        let memory = instance.get_memory(&store, "memory").expect("the fixture exports memory");
        let alloc = instance.get_typed_func(&store, "tdm_alloc").expect("the fixture exports tdm_alloc");
        let free = instance.get_typed_func(&store, "tdm_free").expect("the fixture exports tdm_free");
        let execute =
            instance.get_typed_func(&store, "tdm_plugin_execute_intent").expect("the fixture exports the intent");
        Self { store, memory, alloc, free, execute }
    }

    /// One round trip: the response body's bytes.
    pub fn call(&mut self, request: &[u8]) -> Vec<u8> {
        let len = request.len() as i32;
        let req = self.alloc.call(&mut self.store, len).expect("tdm_alloc runs");
        self.memory.write(&mut self.store, req as usize, request).expect("the request fits");
        let resp = self.execute.call(&mut self.store, (req, len)).expect("the intent runs") as usize;
        let data = self.memory.data(&self.store);
        let body_len = u32::from_le_bytes(data[resp..resp + 4].try_into().expect("four bytes")) as usize;
        let body = data[resp + 4..resp + 4 + body_len].to_vec();
        self.free.call(&mut self.store, (req, len)).expect("tdm_free runs");
        self.free.call(&mut self.store, (resp as i32, body_len as i32 + 4)).expect("tdm_free runs");
        body
    }
}

/// What the host-call baseline's host function does with the request bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFnWork {
    /// Checks they are UTF-8 (the baseline: a plain host call with the same bytes).
    ReadBytes,
    /// Parses them with serde_json into a `Value` and reads `method` (what any JSON host call
    /// costs at least; for context, not a target).
    ParseJson,
}

/// The host-call baseline: the host-call fixture's `log_calls` loop against a plain wasmi host function that takes
/// `(ptr, len)` and does [`HostFnWork`] on the bytes (fuel on, like Contour).
pub struct RawHostLog {
    store: Store<()>,
    calls: TypedFunc<i32, i32>,
}

impl RawHostLog {
    /// A warm instance of the host-call fixture `wasm`.
    pub fn new(wasm: &[u8], work: HostFnWork) -> Self {
        let engine = wasmi_engine(CompilationMode::Lazy, true);
        let module = Module::new(&engine, wasm).expect("the host-call fixture compiles");
        let mut store = Store::new(&engine, ());
        let mut linker = Linker::<()>::new(&engine);
        linker
            .func_wrap("tdm", "tdm_host_call", move |caller: wasmi::Caller<'_, ()>, ptr: u32, len: u32| -> i32 {
                let memory = caller.get_export("memory").and_then(wasmi::Extern::into_memory).expect("memory");
                let bytes = std::hint::black_box(&memory.data(&caller)[ptr as usize..(ptr + len) as usize]);
                match work {
                    HostFnWork::ReadBytes => match std::str::from_utf8(bytes) {
                        Ok(text) => std::hint::black_box(text).len() as i32,
                        Err(_) => -1,
                    },
                    HostFnWork::ParseJson => match serde_json::from_slice::<serde_json::Value>(bytes) {
                        Ok(value) => {
                            value.get("method").and_then(serde_json::Value::as_str).map_or(-3, |m| m.len() as i32)
                        }
                        Err(_) => -3,
                    },
                }
            })
            .expect("the import links");
        linker.func_wrap("tdm", "tdm_host_response", |_: u32, _: u32| -> i32 { -4 }).expect("the import links");
        let instance = linker.instantiate_and_start(&mut store, &module).expect("the fixture instantiates");
        let calls = instance.get_typed_func(&store, "log_calls").expect("it exports log_calls");
        Self { store, calls }
    }

    /// Runs `n` calls; answers how many succeeded.
    pub fn run(&mut self, n: u32) -> i32 {
        self.store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
        self.calls.call(&mut self.store, n as i32).expect("log_calls runs")
    }
}

/// The sha256 guest's raw `sha256_mib (i32) -> i32` export on plain wasmi (fuel on, lazy compilation), its `tdm`
/// imports stubbed to answer -4 (the raw export never calls them).
pub struct RawSha256 {
    store: Store<()>,
    sha256_mib: TypedFunc<i32, i32>,
}

impl RawSha256 {
    /// A warm instance of the sha256 guest `wasm`.
    pub fn new(wasm: &[u8]) -> Self {
        let engine = wasmi_engine(CompilationMode::Lazy, true);
        let module = Module::new(&engine, wasm).expect("the sha256 guest compiles");
        let mut store = Store::new(&engine, ());
        let mut linker = Linker::<()>::new(&engine);
        linker.func_wrap("tdm", "tdm_host_call", |_: i32, _: i32| -> i32 { -4 }).expect("the stub links");
        linker.func_wrap("tdm", "tdm_host_response", |_: i32, _: i32| -> i32 { -4 }).expect("the stub links");
        let instance = linker.instantiate_and_start(&mut store, &module).expect("the sha256 guest instantiates");
        let sha256_mib = instance.get_typed_func(&store, "sha256_mib").expect("the guest exports sha256_mib");
        Self { store, sha256_mib }
    }

    /// Hashes `mib` MiB (a fresh fuel budget each call); answers the digest's first 4 bytes, big-endian.
    pub fn run(&mut self, mib: i32) -> i32 {
        self.store.set_fuel(u64::MAX / 2).expect("fuel metering is on");
        self.sha256_mib.call(&mut self.store, mib).expect("sha256_mib runs")
    }
}
