//! vrlog_native: a small C ABI over the official `zenoh` and `iceoryx2`
//! crates, built as a static library and linked into vrlog's Go transport
//! packages (transport/zenoh, transport/iceoryx2) through cgo.
//!
//! The ABI is declared by hand in include/vrlog_native.h; keep both in step.

pub mod common;
#[cfg(feature = "iceoryx2")]
pub mod iox;
#[cfg(feature = "zenoh")]
pub mod zn;

use std::ffi::{c_char, CString};

/// Frees a string returned through an `err` or `out_json` parameter.
#[no_mangle]
pub unsafe extern "C" fn vr_string_free(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}

/// CLOCK_MONOTONIC in ns, the clock of every RecvMonoNs stamp.
#[no_mangle]
pub extern "C" fn vr_mono_ns() -> i64 {
    common::mono_ns()
}

/// Bit 0: built with zenoh, bit 1: built with iceoryx2.
#[no_mangle]
pub extern "C" fn vr_features() -> u32 {
    (cfg!(feature = "zenoh") as u32) | ((cfg!(feature = "iceoryx2") as u32) << 1)
}
