//! Pieces shared by both transports: error reporting across the C ABI,
//! clocks, and the bounded hand-off queue between native threads and Go.

use std::collections::VecDeque;
use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Status codes returned by every fallible vr_* function (see vrlog_native.h).
pub const VR_OK: i32 = 0;
pub const VR_ERR: i32 = 1;
pub const VR_ERR_INVALID: i32 = 2;
pub const VR_ERR_NOT_FOUND: i32 = 3;
pub const VR_ERR_CLOSED: i32 = 4;
pub const VR_ERR_PANIC: i32 = 5;
pub const VR_ERR_INCOMPATIBLE: i32 = 6;
/// Returned by the batch calls when the timeout elapsed (or a wake-up came) with no item.
pub const VR_TIMEOUT: i32 = 7;

/// The pointer handed across the C ABI for a slice: null when it is empty.
/// An empty slice's pointer is dangling (its alignment: 0x1, 0x8), and Go's
/// stack copier kills the process when a pointer-typed variable holds a
/// value below 4096 ("invalid pointer found on stack"), as a Go variable
/// given such a pointer by cgo does.
pub fn c_ptr<T>(s: &[T]) -> *const T {
    if s.is_empty() {
        std::ptr::null()
    } else {
        s.as_ptr()
    }
}

/// Writes `msg` into `*err` (if err is non-null) as a malloc'ed C string the
/// caller frees with vr_string_free, and returns `code`.
pub fn set_err(err: *mut *mut c_char, code: i32, msg: impl AsRef<str>) -> i32 {
    if !err.is_null() {
        let s = msg.as_ref().replace('\0', " ");
        let c = CString::new(s).unwrap_or_default();
        unsafe { *err = c.into_raw() };
    }
    code
}

/// Runs `f`, turning a Rust panic into VR_ERR_PANIC instead of unwinding into Go.
pub fn guard<F: FnOnce() -> i32>(err: *mut *mut c_char, f: F) -> i32 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(p) => {
            let msg = if let Some(s) = p.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = p.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            set_err(err, VR_ERR_PANIC, format!("vrlog_native: panic: {msg}"))
        }
    }
}

pub unsafe fn cstr<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    std::ffi::CStr::from_ptr(p).to_str().ok()
}

pub unsafe fn bytes<'a>(p: *const u8, n: usize) -> &'a [u8] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

#[inline]
fn clock(id: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// CLOCK_REALTIME in ns.
#[inline]
pub fn wall_ns() -> i64 {
    clock(libc::CLOCK_REALTIME)
}

/// CLOCK_MONOTONIC in ns (the same clock transport/clock.MonoNow reads in Go).
#[inline]
pub fn mono_ns() -> i64 {
    clock(libc::CLOCK_MONOTONIC)
}

struct Inner<T> {
    items: VecDeque<T>,
    bytes: usize,
    closed: bool,
    waiters: usize,
    wake: u64,
}

/// A bounded multi-producer queue drained in batches by one consumer (Go).
/// When full, the incoming item is dropped and counted.
pub struct BatchQueue<T> {
    inner: Mutex<Inner<T>>,
    cv: Condvar,
    cap_items: usize,
    cap_bytes: usize,
    pub dropped: AtomicU64,
    pub received: AtomicU64,
}

/// How long a drain that found its queue idle waits for a burst to build up.
const LINGER: Duration = Duration::from_micros(50);
const LINGER_MIN_ITEMS: usize = 16;

pub enum Drained {
    Items,
    Timeout,
    Closed,
}

impl<T> BatchQueue<T> {
    pub fn new(cap_items: usize, cap_bytes: usize) -> Self {
        BatchQueue {
            inner: Mutex::new(Inner {
                items: VecDeque::with_capacity(cap_items.min(4096)),
                bytes: 0,
                closed: false,
                waiters: 0,
                wake: 0,
            }),
            cv: Condvar::new(),
            cap_items: cap_items.max(1),
            cap_bytes: if cap_bytes == 0 { usize::MAX } else { cap_bytes },
            dropped: AtomicU64::new(0),
            received: AtomicU64::new(0),
        }
    }

    /// Pushes an item of `size` bytes; returns it back if the queue is full or closed.
    pub fn push(&self, item: T, size: usize) -> Result<(), T> {
        self.received.fetch_add(1, Ordering::Relaxed);
        let mut g = self.inner.lock().unwrap();
        if g.closed
            || g.items.len() >= self.cap_items
            || (g.bytes + size > self.cap_bytes && !g.items.is_empty())
        {
            drop(g);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Err(item);
        }
        g.items.push_back(item);
        g.bytes += size;
        let notify = g.waiters > 0;
        drop(g);
        if notify {
            self.cv.notify_one();
        }
        Ok(())
    }

    /// Would an item of `size` bytes be dropped now? Lets a producer skip
    /// the copy of a sample it could not queue (it must then call
    /// `count_drop`).
    pub fn full(&self, size: usize) -> bool {
        let g = self.inner.lock().unwrap();
        g.closed || g.items.len() >= self.cap_items || (g.bytes + size > self.cap_bytes && !g.items.is_empty())
    }

    /// Counts an item dropped without being offered to `push`.
    pub fn count_drop(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Moves up to `max` items into `out`, waiting up to `timeout` for the first.
    pub fn drain(
        &self,
        out: &mut Vec<T>,
        max: usize,
        timeout: Duration,
        size_of: impl Fn(&T) -> usize,
    ) -> Drained {
        let mut g = self.inner.lock().unwrap();
        if g.items.is_empty() && !g.closed && !timeout.is_zero() {
            let wake0 = g.wake;
            let deadline = std::time::Instant::now() + timeout;
            g.waiters += 1;
            while g.items.is_empty() && !g.closed && g.wake == wake0 {
                let now = std::time::Instant::now();
                if now >= deadline {
                    break;
                }
                g = self.cv.wait_timeout(g, deadline - now).unwrap().0;
            }
            g.waiters -= 1;
            // Woken by a first item into an idle queue: linger a moment so a
            // burst becomes one batch (one cgo crossing) instead of one
            // wake-up per sample. Costs at most LINGER of delivery latency;
            // receive stamps were taken before queueing, so they are unaffected.
            if !g.items.is_empty() && g.items.len() < LINGER_MIN_ITEMS && !g.closed && g.wake == wake0 {
                drop(g);
                std::thread::sleep(LINGER);
                g = self.inner.lock().unwrap();
            }
        }
        if g.items.is_empty() {
            return if g.closed { Drained::Closed } else { Drained::Timeout };
        }
        let n = g.items.len().min(max.max(1));
        let mut freed = 0;
        for it in g.items.drain(..n) {
            freed += size_of(&it);
            out.push(it);
        }
        g.bytes -= freed.min(g.bytes);
        Drained::Items
    }

    /// Wakes a blocked drain without closing (used for context cancellation in Go).
    pub fn wake(&self) {
        let mut g = self.inner.lock().unwrap();
        g.wake += 1;
        drop(g);
        self.cv.notify_all();
    }

    /// Closes the queue: pushes fail, drains return what is left and then Closed.
    pub fn close(&self) {
        let mut g = self.inner.lock().unwrap();
        g.closed = true;
        drop(g);
        self.cv.notify_all();
    }

    pub fn clear(&self) -> Vec<T> {
        let mut g = self.inner.lock().unwrap();
        g.bytes = 0;
        g.items.drain(..).collect()
    }
}
