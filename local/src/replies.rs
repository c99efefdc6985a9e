//! Every reply the router gives, for `make test`'s check of each against
//! docs/openapi.yaml with a real OpenAPI validator
//! (`scripts/validate_replies.py`): while [`RECORD_ENV`] names a folder,
//! one JSON line per reply (method, uri, status, headers, JSON body) goes
//! to a file of this process there. Nothing is recorded when it is unset.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

use lambda_http::{Body, Response};
use serde_json::{json, Map, Value};

/// The folder the replies go to (`make test` sets it inside cargo's
/// target directory).
pub const RECORD_ENV: &str = "SEATCLAIM_REPLY_RECORD";

/// This process's record file, opened on the first reply, if recording.
fn file() -> Option<&'static Mutex<std::fs::File>> {
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let folder = std::path::PathBuf::from(std::env::var_os(RECORD_ENV)?);
        // A test run that asks for the record and cannot write it must
        // fail, not check nothing.
        std::fs::create_dir_all(&folder).expect("the reply record's folder");
        let path = folder.join(format!("replies-{}.jsonl", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("the reply record");
        Some(Mutex::new(file))
    })
    .as_ref()
}

/// Records `reply` to `method uri`, if recording. A compressed body (an
/// availability reply to a client that accepts gzip) is recorded without
/// its body: the validator checks status and headers only.
pub fn record(method: &str, uri: &str, reply: &Response<Body>) {
    let Some(file) = file() else { return };
    let headers: Map<String, Value> = reply
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_owned(), json!(v.to_str().ok()?))))
        .collect();
    let body = match headers.contains_key("content-encoding") {
        true => Value::Null,
        false => serde_json::from_slice(reply.body().as_ref()).unwrap_or(Value::Null),
    };
    let line = json!({"method": method, "uri": uri, "status": reply.status().as_u16(),
        "headers": headers, "body": body});
    let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
    writeln!(file, "{line}").expect("a reply recorded");
}
