//! Test guest: a murmur tool in Rust, without wit-bindgen (crates.io is out of reach), so the
//! canonical-ABI glue for `murmur:tool/run@0.2.0` is written by hand below.
//!
//! Built by tests/guests/build.py (`build_guest("rust_tool")`) with Debian's rustc for
//! `wasm32-wasi` (the target rustup now calls `wasm32-wasip1`), then turned into a component
//! with `wasm-tools component embed` + `component new --adapt wasi_snapshot_preview1=<reactor
//! adapter>`, so that, like every Rust-built component, it imports `wasi:cli/*` and `wasi:io/*`.
//! It links wasi-libc's `crt1-reactor.o` (exporting `_initialize`, which `component new` runs at
//! instantiation), so static constructors run once and never inside `cabi_realloc`.
//! Never committed as a binary.
//!
//! `tool-input.data` is JSON `{"op": ...}`:
//! * echo   -> passed, data = the input JSON (keys sorted), metadata [("log_path", ...)]
//! * ask    -> request-input(input["prompt"]); passed, data = the answer
//! * write  -> writes input["text"] to input["path"] under the preopened "."; passed, metadata
//!             [("state_effect", "mutate"), ("resource_id", path)]
//! * read   -> passed, data = the file's text, metadata [("state_effect","read"),("resource_id",path)]
//! * env    -> passed, data = JSON object of the environment (WASI environ_get)
//! * fail   -> failed, data "asked to fail"
//! * crash  -> panics: the guest traps (wasm32-wasi panics abort)
//! * stream -> emit-chunk("rust "), emit-chunk("chunk"); passed
//! * other  -> error, with a message
//!
//! Every call prints "tool_rust stdout" to stdout and "tool_rust stderr" to stderr.

use std::alloc::{self, Layout};
use std::cell::{RefCell, UnsafeCell};
use std::io::Write;

mod json;

use json::Value;

// ---- imports -----------------------------------------------------------------------------

#[link(wasm_import_module = "murmur:task/task@0.1.0")]
extern "C" {
    /// request-input: func(prompt: string) -> string; the answer's (ptr, len) land in `ret`.
    #[link_name = "request-input"]
    fn import_request_input(ptr: *const u8, len: usize, ret: *mut usize);
}

#[link(wasm_import_module = "murmur:text/chunks@0.1.0")]
extern "C" {
    #[link_name = "emit-chunk"]
    fn import_emit_chunk(ptr: *const u8, len: usize);
}

fn request_input(prompt: &str) -> String {
    let mut ret = [0usize; 2];
    unsafe {
        import_request_input(prompt.as_ptr(), prompt.len(), ret.as_mut_ptr());
        // The host allocated the answer with our cabi_realloc(0, 0, 1, len): we own it now.
        take_string(ret[0] as *mut u8, ret[1])
    }
}

fn emit_chunk(chunk: &str) {
    unsafe { import_emit_chunk(chunk.as_ptr(), chunk.len()) }
}

// ---- canonical ABI plumbing ----------------------------------------------------------------

/// The allocator the host uses to pass strings and lists into this module.
#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(
    old: *mut u8,
    old_size: usize,
    align: usize,
    new_size: usize,
) -> *mut u8 {
    let ptr = if old_size == 0 {
        if new_size == 0 {
            return align as *mut u8;
        }
        alloc::alloc(Layout::from_size_align_unchecked(new_size, align))
    } else {
        alloc::realloc(old, Layout::from_size_align_unchecked(old_size, align), new_size)
    };
    if ptr.is_null() {
        std::process::abort();
    }
    ptr
}

unsafe fn take_string(ptr: *mut u8, len: usize) -> String {
    let bytes = if len == 0 { Vec::new() } else { Vec::from_raw_parts(ptr, len, len) };
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `tool-result` is 60 bytes, align 4.
#[repr(C, align(8))]
struct RetArea([u8; 64]);

thread_local! {
    /// Where `run` lowers its result; the host reads it before the post-return call.
    static RET_AREA: UnsafeCell<RetArea> = UnsafeCell::new(RetArea([0; 64]));
    /// Strings and lists handed to the host, freed in the post-return function.
    static KEEP: RefCell<(Vec<Vec<u8>>, Vec<Vec<u32>>)> = RefCell::new((Vec::new(), Vec::new()));
}

fn ret_area() -> *mut u8 {
    RET_AREA.with(|cell| cell.get() as *mut u8)
}

fn keep_str(s: String) -> (u32, u32) {
    let bytes = s.into_bytes();
    let out = (bytes.as_ptr() as u32, bytes.len() as u32);
    KEEP.with(|k| k.borrow_mut().0.push(bytes));
    out
}

unsafe fn put_u8(at: usize, v: u8) {
    *ret_area().add(at) = v;
}

unsafe fn put_u32(at: usize, v: u32) {
    std::ptr::write(ret_area().add(at) as *mut u32, v);
}

unsafe fn put_option_str(at: usize, s: Option<String>) {
    match s {
        None => put_u8(at, 0),
        Some(s) => {
            let (p, l) = keep_str(s);
            put_u8(at, 1);
            put_u32(at + 4, p);
            put_u32(at + 8, l);
        }
    }
}

#[derive(Clone, Copy)]
enum Status {
    Passed = 0,
    Failed = 1,
    Error = 2,
}

struct ToolResult {
    status: Status,
    summary: Option<String>,
    data: Option<String>,
    metadata: Vec<(String, String)>,
}

unsafe fn lower_result(r: ToolResult) -> *mut u8 {
    std::ptr::write_bytes(ret_area(), 0, 64);
    put_u8(0, r.status as u8);
    put_option_str(4, r.summary);
    put_option_str(16, r.data);
    put_option_str(28, None); // data-path
    put_u8(40, 0); // truncated
    let mut words: Vec<u32> = Vec::with_capacity(r.metadata.len() * 4);
    for (k, v) in r.metadata {
        let (kp, kl) = keep_str(k);
        let (vp, vl) = keep_str(v);
        words.extend_from_slice(&[kp, kl, vp, vl]);
    }
    let count = (words.len() / 4) as u32;
    put_u32(44, if count == 0 { 4 } else { words.as_ptr() as u32 });
    put_u32(48, count);
    KEEP.with(|k| k.borrow_mut().1.push(words));
    put_u32(52, 4); // attachments: empty list
    put_u32(56, 0);
    ret_area()
}

/// murmur:tool/run@0.2.0#run(input: tool-input) -> tool-result
#[export_name = "murmur:tool/run@0.2.0#run"]
pub unsafe extern "C" fn export_run(
    data_is_some: i32,
    data_ptr: *mut u8,
    data_len: usize,
    log_is_some: i32,
    log_ptr: *mut u8,
    log_len: usize,
) -> *mut u8 {
    let data = if data_is_some != 0 { Some(take_string(data_ptr, data_len)) } else { None };
    let log_path = if log_is_some != 0 { Some(take_string(log_ptr, log_len)) } else { None };
    lower_result(run(data, log_path))
}

#[export_name = "cabi_post_murmur:tool/run@0.2.0#run"]
pub extern "C" fn post_run(_ret: *mut u8) {
    KEEP.with(|k| {
        let mut k = k.borrow_mut();
        k.0.clear();
        k.1.clear();
    });
}

// ---- the tool ------------------------------------------------------------------------------

fn result(status: Status, data: Option<String>, summary: &str, metadata: Vec<(String, String)>) -> ToolResult {
    ToolResult { status, summary: Some(summary.to_string()), data, metadata }
}

fn error(message: String) -> ToolResult {
    ToolResult { status: Status::Error, summary: Some(message.clone()), data: Some(message), metadata: vec![] }
}

fn run(data: Option<String>, log_path: Option<String>) -> ToolResult {
    println!("tool_rust stdout");
    eprintln!("tool_rust stderr");
    let _ = std::io::stdout().flush();

    let args = match json::parse(data.as_deref().unwrap_or("")) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return error("input is not a JSON object".to_string()),
        Err(e) => return error(format!("input is not JSON: {}", e)),
    };
    let get = |key: &str| -> Option<&Value> { args.iter().find(|(k, _)| k == key).map(|(_, v)| v) };
    let get_str = |key: &str| -> String {
        match get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_json(),
            None => String::new(),
        }
    };
    let op = get("op").cloned().unwrap_or(Value::Null);
    let op_name = match &op {
        Value::String(s) => s.as_str(),
        _ => "",
    };
    match op_name {
        "echo" => {
            let mut sorted = args.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            result(Status::Passed, Some(Value::Object(sorted).to_json()), "echo",
                   vec![("log_path".to_string(), log_path.unwrap_or_default())])
        }
        "ask" => result(Status::Passed, Some(request_input(&get_str("prompt"))), "asked", vec![]),
        "write" => {
            let path = get_str("path");
            match std::fs::write(&path, get_str("text")) {
                Ok(()) => result(Status::Passed, None, &format!("wrote {}", path),
                                 vec![("state_effect".into(), "mutate".into()), ("resource_id".into(), path)]),
                Err(e) => error(format!("cannot write {}: {}", path, e)),
            }
        }
        "read" => {
            let path = get_str("path");
            match std::fs::read_to_string(&path) {
                Ok(text) => result(Status::Passed, Some(text), &format!("read {}", path),
                                   vec![("state_effect".into(), "read".into()), ("resource_id".into(), path)]),
                Err(e) => error(format!("cannot read {}: {}", path, e)),
            }
        }
        "env" => {
            let mut vars: Vec<(String, Value)> =
                std::env::vars().map(|(k, v)| (k, Value::String(v))).collect();
            vars.sort_by(|a, b| a.0.cmp(&b.0));
            result(Status::Passed, Some(Value::Object(vars).to_json()), "env", vec![])
        }
        "fail" => result(Status::Failed, Some("asked to fail".to_string()), "failed", vec![]),
        "crash" => panic!("tool_rust asked to crash"),
        "stream" => {
            emit_chunk("rust ");
            emit_chunk("chunk");
            result(Status::Passed, Some("streamed".to_string()), "streamed", vec![])
        }
        _ => error(format!("unknown op: {}", op.to_json())),
    }
}
