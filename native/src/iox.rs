//! iceoryx2 over a C ABI: nodes, service discovery, type-agnostic subscribers
//! (a polling thread per subscriber copies each sample out of shared memory
//! once, releases it, and queues the copy for Go) and publishers that create
//! or open a service with caller-given type details.

use std::ffi::c_char;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use iceoryx2::prelude::*;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as StaticPattern;
use iceoryx2::service::static_config::message_type_details::{TypeDetail, TypeVariant};
use iceoryx2::service::static_config::StaticConfig;

use crate::common::*;

type Svc = ipc_threadsafe::Service;
type CustomPort = iceoryx2::service::port_factory::publish_subscribe::PortFactory<
    Svc,
    [CustomPayloadMarker],
    CustomHeaderMarker,
>;

fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| set_log_level_from_env_or(LogLevel::Fatal));
}

pub struct INode {
    node: Node<Svc>,
}

#[repr(C)]
pub struct VrITypeDetail {
    /// 0 = FixedSize, 1 = Dynamic (a slice of `size`-byte elements).
    pub variant: i32,
    pub type_name: *const c_char,
    pub size: usize,
    pub alignment: usize,
}

/// Service settings; 0 (or -1 for safe_overflow) means "not specified": on
/// create the iceoryx2 default is used, on open any existing value is accepted.
#[repr(C)]
pub struct VrIServiceOpts {
    pub max_publishers: usize,
    pub max_subscribers: usize,
    pub max_nodes: usize,
    pub history_size: usize,
    pub subscriber_max_buffer_size: usize,
    pub subscriber_max_borrowed_samples: usize,
    pub safe_overflow: i32,
}

#[repr(C)]
pub struct VrISample {
    pub header: *const u8,
    pub header_len: usize,
    pub payload: *const u8,
    pub payload_len: usize,
    pub publisher_id: [u8; 16],
    pub recv_wall_ns: i64,
    pub recv_mono_ns: i64,
}

fn node_err(err: *mut *mut c_char, what: &str, e: impl std::fmt::Debug) -> i32 {
    set_err(err, VR_ERR, format!("iceoryx2: {what}: {e:?}"))
}

#[no_mangle]
pub unsafe extern "C" fn vr_inode_create(
    name: *const c_char,
    out: *mut *mut INode,
    err: *mut *mut c_char,
) -> i32 {
    init_logging();
    let name = cstr(name).unwrap_or("").to_string();
    guard(err, move || {
        let mut b = NodeBuilder::new().signal_handling_mode(SignalHandlingMode::Disabled);
        if !name.is_empty() {
            match NodeName::new(&name) {
                Ok(n) => b = b.name(&n),
                Err(e) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: node name {name:?}: {e:?}")),
            }
        }
        match b.create::<Svc>() {
            Ok(node) => {
                *out = Box::into_raw(Box::new(INode { node }));
                VR_OK
            }
            Err(e) => node_err(err, "create node", e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn vr_inode_free(n: *mut INode) {
    if !n.is_null() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(Box::from_raw(n))));
    }
}

/// Removes the stale resources (shared memory, files, service registrations)
/// of nodes whose processes died (e.g. a publisher killed with SIGKILL).
/// Writes the number of cleaned and failed nodes.
#[no_mangle]
pub unsafe extern "C" fn vr_inode_cleanup_dead(n: *const INode, cleaned: *mut u64, failed: *mut u64) {
    let node = &(*n).node;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| node.try_cleanup_dead_nodes()));
    match r {
        Ok(st) => {
            *cleaned = st.cleanups;
            *failed = st.failed_cleanups;
        }
        Err(_) => {
            *cleaned = 0;
            *failed = 0;
        }
    }
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_type(out: &mut String, t: &TypeDetail) {
    out.push_str("{\"variant\":");
    json_str(out, if t.variant() == TypeVariant::Dynamic { "dynamic" } else { "fixed" });
    out.push_str(",\"type_name\":");
    json_str(out, &t.type_name().to_string());
    let _ = write!(out, ",\"size\":{},\"alignment\":{}}}", t.size(), t.alignment());
}

fn json_service(out: &mut String, sc: &StaticConfig) {
    let ps = sc.publish_subscribe();
    let mt = ps.message_type_details();
    out.push_str("{\"name\":");
    json_str(out, sc.name().as_str());
    out.push_str(",\"payload\":");
    json_type(out, &mt.payload);
    out.push_str(",\"user_header\":");
    json_type(out, &mt.user_header);
    let _ = write!(
        out,
        ",\"max_publishers\":{},\"max_subscribers\":{},\"max_nodes\":{},\"history_size\":{},\"subscriber_max_buffer_size\":{},\"subscriber_max_borrowed_samples\":{},\"safe_overflow\":{}}}",
        ps.max_publishers(),
        ps.max_subscribers(),
        ps.max_nodes(),
        ps.history_size(),
        ps.subscriber_max_buffer_size(),
        ps.subscriber_max_borrowed_samples(),
        ps.has_safe_overflow()
    );
}

fn out_string(out: *mut *mut c_char, s: String) {
    unsafe { *out = std::ffi::CString::new(s).unwrap_or_default().into_raw() };
}

/// Lists the publish-subscribe services as a JSON array (see services.go for the schema).
#[no_mangle]
pub unsafe extern "C" fn vr_inode_list_services(
    n: *const INode,
    out_json: *mut *mut c_char,
    err: *mut *mut c_char,
) -> i32 {
    let node = &(*n).node;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let mut s = String::from("[");
        let mut first = true;
        let r = Svc::list(node.config(), |d| {
            if let StaticPattern::PublishSubscribe(_) = d.static_details.messaging_pattern() {
                if !first {
                    s.push(',');
                }
                first = false;
                json_service(&mut s, &d.static_details);
            }
            CallbackProgression::Continue
        });
        if let Err(e) = r {
            return node_err(err, "list services", e);
        }
        s.push(']');
        out_string(out_json, s);
        VR_OK
    }))
}

fn lookup(node: &Node<Svc>, name: &ServiceName) -> Result<Option<StaticConfig>, String> {
    match Svc::details(name, node.config(), MessagingPattern::PublishSubscribe) {
        Ok(Some(d)) => Ok(Some(d.static_details)),
        Ok(None) => Ok(None),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// The static details of one publish-subscribe service as a JSON object;
/// VR_ERR_NOT_FOUND when it does not exist.
#[no_mangle]
pub unsafe extern "C" fn vr_inode_service_details(
    n: *const INode,
    service: *const c_char,
    out_json: *mut *mut c_char,
    err: *mut *mut c_char,
) -> i32 {
    let node = &(*n).node;
    let name = cstr(service).unwrap_or("").to_string();
    guard(err, std::panic::AssertUnwindSafe(|| {
        let sn = match ServiceName::new(&name) {
            Ok(s) => s,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: service name {name:?}: {e:?}")),
        };
        match lookup(node, &sn) {
            Ok(Some(sc)) => {
                let mut s = String::new();
                json_service(&mut s, &sc);
                out_string(out_json, s);
                VR_OK
            }
            Ok(None) => set_err(err, VR_ERR_NOT_FOUND, format!("iceoryx2: service {name:?} does not exist")),
            Err(e) => set_err(err, VR_ERR, format!("iceoryx2: service {name:?}: {e}")),
        }
    }))
}

fn type_detail(t: &VrITypeDetail) -> Result<TypeDetail, String> {
    let name = unsafe { cstr(t.type_name) }.ok_or("type name is not UTF-8")?;
    let variant = match t.variant {
        0 => TypeVariant::FixedSize,
        1 => TypeVariant::Dynamic,
        v => return Err(format!("unknown type variant {v}")),
    };
    if t.alignment == 0 || !t.alignment.is_power_of_two() {
        return Err(format!("alignment {} of {name:?} is not a power of two", t.alignment));
    }
    TypeDetail::__internal_new_from_parts(variant, name, t.size, t.alignment)
        .map_err(|e| format!("type name {name:?}: {e:?}"))
}

struct IItem {
    buf: Vec<u8>,
    header_len: usize,
    publisher_id: [u8; 16],
    wall: i64,
    mono: i64,
}

pub struct ISub {
    q: Arc<BatchQueue<IItem>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    pool: Arc<Mutex<Vec<Vec<u8>>>>,
    batch: Vec<IItem>,
    descs: Vec<VrISample>,
    last_err: Arc<Mutex<Option<String>>>,
}

#[no_mangle]
pub unsafe extern "C" fn vr_isub_create(
    n: *const INode,
    service: *const c_char,
    buffer_size: usize,
    queue_cap: usize,
    queue_bytes: usize,
    poll_ns: i64,
    out: *mut *mut ISub,
    err: *mut *mut c_char,
) -> i32 {
    let node = &(*n).node;
    let name = cstr(service).unwrap_or("").to_string();
    guard(err, std::panic::AssertUnwindSafe(|| {
        let sn = match ServiceName::new(&name) {
            Ok(s) => s,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: service name {name:?}: {e:?}")),
        };
        let sc = match lookup(node, &sn) {
            Ok(Some(sc)) => sc,
            Ok(None) => {
                return set_err(err, VR_ERR_NOT_FOUND, format!("iceoryx2: service {name:?} does not exist"))
            }
            Err(e) => return set_err(err, VR_ERR, format!("iceoryx2: service {name:?}: {e}")),
        };
        let mt = sc.publish_subscribe().message_type_details().clone();
        let svc: CustomPort = match node
            .service_builder(&sn)
            .publish_subscribe::<[CustomPayloadMarker]>()
            .user_header::<CustomHeaderMarker>()
            .__internal_set_payload_type_details(&mt.payload)
            .__internal_set_user_header_type_details(&mt.user_header)
            .__internal_skip_type_definition_verification()
            .open()
        {
            Ok(s) => s,
            Err(e) => {
                // Not there (yet, or any more): a service being created or
                // going away is retried like a missing one.
                let code = match e {
                    iceoryx2::service::builder::publish_subscribe::PublishSubscribeOpenError::DoesNotExist
                    | iceoryx2::service::builder::publish_subscribe::PublishSubscribeOpenError::IsMarkedForDestruction
                    | iceoryx2::service::builder::publish_subscribe::PublishSubscribeOpenError::HangsInCreation => VR_ERR_NOT_FOUND,
                    _ => VR_ERR,
                };
                return set_err(err, code, format!("iceoryx2: open service {name:?}: {e:?}"));
            }
        };
        let mut sb = svc.subscriber_builder();
        if buffer_size > 0 {
            sb = sb.buffer_size(buffer_size);
        }
        let sub = match sb.create() {
            Ok(s) => s,
            Err(e) => return node_err(err, &format!("create subscriber on {name:?}"), e),
        };
        let header_len = mt.user_header.size();
        let q = Arc::new(BatchQueue::new(queue_cap, queue_bytes));
        let stop = Arc::new(AtomicBool::new(false));
        let pool: Arc<Mutex<Vec<Vec<u8>>>> = Arc::new(Mutex::new(Vec::new()));
        let last_err = Arc::new(Mutex::new(None));
        let (q2, stop2, pool2, le2) = (q.clone(), stop.clone(), pool.clone(), last_err.clone());
        let poll = Duration::from_nanos(poll_ns.max(1000) as u64);
        let th = std::thread::Builder::new()
            .name("vrlog-iox2-sub".into())
            .spawn(move || {
                let _svc = svc; // keep the service open as long as the port
                while !stop2.load(Ordering::Relaxed) {
                    let mut got = false;
                    loop {
                        match sub.receive() {
                            Ok(Some(sample)) => {
                                got = true;
                                let wall = wall_ns();
                                let mono = mono_ns();
                                let hdr = unsafe {
                                    std::slice::from_raw_parts(
                                        (sample.user_header() as *const CustomHeaderMarker).cast::<u8>(),
                                        header_len,
                                    )
                                };
                                let pl = sample.payload();
                                let pl = unsafe {
                                    std::slice::from_raw_parts(pl.as_ptr().cast::<u8>(), pl.len())
                                };
                                let total = header_len + pl.len();
                                if q2.full(total) {
                                    // no room: release at once and count, without copying
                                    drop(sample);
                                    q2.count_drop();
                                    continue;
                                }
                                let mut buf = {
                                    let mut p = pool2.lock().unwrap();
                                    // take a pooled buffer that is big enough, if any
                                    match p.iter().position(|b| b.capacity() >= total) {
                                        Some(i) => p.swap_remove(i),
                                        None => p.pop().unwrap_or_default(),
                                    }
                                };
                                buf.clear();
                                buf.reserve(total);
                                buf.extend_from_slice(hdr);
                                buf.extend_from_slice(pl);
                                let id = sample.origin().value().to_le_bytes();
                                drop(sample); // release the shared-memory sample right after the copy
                                let item = IItem { buf, header_len, publisher_id: id, wall, mono };
                                if let Err(it) = q2.push(item, total) {
                                    pool2.lock().unwrap().push(it.buf);
                                }
                            }
                            Ok(None) => break,
                            Err(e) => {
                                *le2.lock().unwrap() = Some(format!("{e:?}"));
                                break;
                            }
                        }
                    }
                    if !got {
                        std::thread::sleep(poll);
                    }
                }
                drop(sub);
            });
        let th = match th {
            Ok(t) => t,
            Err(e) => return set_err(err, VR_ERR, format!("iceoryx2: spawn subscriber thread: {e}")),
        };
        *out = Box::into_raw(Box::new(ISub {
            q,
            stop,
            thread: Some(th),
            pool,
            batch: Vec::new(),
            descs: Vec::new(),
            last_err,
        }));
        VR_OK
    }))
}

impl ISub {
    fn recycle(&mut self) {
        self.descs.clear();
        if self.batch.is_empty() {
            return;
        }
        let mut p = self.pool.lock().unwrap();
        for it in self.batch.drain(..) {
            if p.len() < 8 {
                p.push(it.buf);
            }
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn vr_isub_next_batch(
    s: *mut ISub,
    max: usize,
    timeout_ns: i64,
    out: *mut *const VrISample,
    out_n: *mut usize,
) -> i32 {
    let s = &mut *s;
    s.recycle();
    *out_n = 0;
    match s.q.drain(&mut s.batch, max, Duration::from_nanos(timeout_ns.max(0) as u64), |it| it.buf.len()) {
        Drained::Items => {
            for it in &s.batch {
                s.descs.push(VrISample {
                    header: c_ptr(&it.buf[..it.header_len]),
                    header_len: it.header_len,
                    payload: c_ptr(&it.buf[it.header_len..]),
                    payload_len: it.buf.len() - it.header_len,
                    publisher_id: it.publisher_id,
                    recv_wall_ns: it.wall,
                    recv_mono_ns: it.mono,
                });
            }
            *out = c_ptr(&s.descs);
            *out_n = s.descs.len();
            VR_OK
        }
        Drained::Timeout => VR_TIMEOUT,
        Drained::Closed => VR_ERR_CLOSED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn vr_isub_wake(s: *const ISub) {
    (*s).q.wake();
}

#[no_mangle]
pub unsafe extern "C" fn vr_isub_stats(s: *const ISub, dropped: *mut u64, received: *mut u64) {
    let s = &*s;
    *dropped = s.q.dropped.load(Ordering::Relaxed);
    *received = s.q.received.load(Ordering::Relaxed);
}

/// The last receive error seen by the polling thread (malloc'ed string, or NULL).
#[no_mangle]
pub unsafe extern "C" fn vr_isub_last_error(s: *const ISub) -> *mut c_char {
    match (*s).last_err.lock().unwrap().clone() {
        Some(e) => std::ffi::CString::new(e).unwrap_or_default().into_raw(),
        None => std::ptr::null_mut(),
    }
}

/// Stops the polling thread (releasing the port) and wakes blocked batch calls.
#[no_mangle]
pub unsafe extern "C" fn vr_isub_shutdown(s: *mut ISub) {
    let s = &mut *s;
    s.stop.store(true, Ordering::Relaxed);
    if let Some(t) = s.thread.take() {
        let _ = t.join();
    }
    s.q.close();
}

#[no_mangle]
pub unsafe extern "C" fn vr_isub_free(s: *mut ISub) {
    if s.is_null() {
        return;
    }
    vr_isub_shutdown(s);
    let b = Box::from_raw(s);
    drop(b.q.clear());
    drop(b);
}

pub struct IPub {
    svc: CustomPort,
    publisher: iceoryx2::port::publisher::Publisher<Svc, [CustomPayloadMarker], CustomHeaderMarker>,
    payload: TypeDetail,
    header: TypeDetail,
}

#[no_mangle]
pub unsafe extern "C" fn vr_ipub_create(
    n: *const INode,
    service: *const c_char,
    payload: *const VrITypeDetail,
    user_header: *const VrITypeDetail,
    opts: *const VrIServiceOpts,
    initial_max_slice_len: usize,
    allocation_strategy: i32,
    max_loaned_samples: usize,
    out: *mut *mut IPub,
    err: *mut *mut c_char,
) -> i32 {
    let node = &(*n).node;
    let name = cstr(service).unwrap_or("").to_string();
    let (pt, ht) = match (type_detail(&*payload), type_detail(&*user_header)) {
        (Ok(p), Ok(h)) => (p, h),
        (Err(e), _) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: payload type: {e}")),
        (_, Err(e)) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: user header type: {e}")),
    };
    let o = &*opts;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let sn = match ServiceName::new(&name) {
            Ok(s) => s,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("iceoryx2: service name {name:?}: {e:?}")),
        };
        let mut b = node
            .service_builder(&sn)
            .publish_subscribe::<[CustomPayloadMarker]>()
            .user_header::<CustomHeaderMarker>()
            .__internal_set_payload_type_details(&pt)
            .__internal_set_user_header_type_details(&ht);
        if o.max_publishers > 0 {
            b = b.max_publishers(o.max_publishers);
        }
        if o.max_subscribers > 0 {
            b = b.max_subscribers(o.max_subscribers);
        }
        if o.max_nodes > 0 {
            b = b.max_nodes(o.max_nodes);
        }
        if o.history_size > 0 {
            b = b.history_size(o.history_size);
        }
        if o.subscriber_max_buffer_size > 0 {
            b = b.subscriber_max_buffer_size(o.subscriber_max_buffer_size);
        }
        if o.subscriber_max_borrowed_samples > 0 {
            b = b.subscriber_max_borrowed_samples(o.subscriber_max_borrowed_samples);
        }
        if o.safe_overflow >= 0 {
            b = b.enable_safe_overflow(o.safe_overflow != 0);
        }
        let svc: CustomPort = match b.open_or_create() {
            Ok(s) => s,
            Err(e) => {
                let s = format!("{e:?}");
                // Types or limits that the existing service does not meet.
                let code = if s.contains("Incompatible") || s.contains("DoesNotSupport") { VR_ERR_INCOMPATIBLE } else { VR_ERR };
                return set_err(err, code, format!("iceoryx2: open or create service {name:?}: {s}"));
            }
        };
        let mut pb = svc.publisher_builder();
        if max_loaned_samples > 0 {
            pb = pb.max_loaned_samples(max_loaned_samples);
        }
        let publisher = if pt.variant() == TypeVariant::Dynamic {
            let strat = match allocation_strategy {
                1 => AllocationStrategy::BestFit,
                2 => AllocationStrategy::Static,
                _ => AllocationStrategy::PowerOfTwo,
            };
            pb.initial_max_slice_len(initial_max_slice_len.max(1))
                .allocation_strategy(strat)
                .create()
        } else {
            pb.create()
        };
        match publisher {
            Ok(p) => {
                *out = Box::into_raw(Box::new(IPub { svc, publisher: p, payload: pt, header: ht }));
                VR_OK
            }
            Err(e) => node_err(err, &format!("create publisher on {name:?}"), e),
        }
    }))
}

/// Sends one sample: header_len must equal the user header size; payload_len
/// must equal the payload size (fixed) or be a multiple of it (dynamic).
/// On success *delivered is the number of subscribers reached.
#[no_mangle]
pub unsafe extern "C" fn vr_ipub_send(
    p: *const IPub,
    header: *const u8,
    header_len: usize,
    payload: *const u8,
    payload_len: usize,
    delivered: *mut usize,
    err: *mut *mut c_char,
) -> i32 {
    let p = &*p;
    if header_len != p.header.size() {
        return set_err(
            err,
            VR_ERR_INVALID,
            format!("iceoryx2: user header is {header_len} bytes, the service's type {:?} has {}", p.header.type_name().to_string(), p.header.size()),
        );
    }
    let esz = p.payload.size();
    let slice_len = if p.payload.variant() == TypeVariant::Dynamic {
        if esz == 0 || payload_len % esz != 0 {
            return set_err(err, VR_ERR_INVALID, format!("iceoryx2: payload of {payload_len} bytes is not a whole number of {esz}-byte elements"));
        }
        payload_len / esz
    } else {
        if payload_len != esz {
            return set_err(err, VR_ERR_INVALID, format!("iceoryx2: payload is {payload_len} bytes, the service's type {:?} has {esz}", p.payload.type_name().to_string()));
        }
        1
    };
    let h = bytes(header, header_len);
    let pl = bytes(payload, payload_len);
    guard(err, std::panic::AssertUnwindSafe(|| {
        let mut s = match p.publisher.loan_custom_payload(slice_len) {
            Ok(s) => s,
            Err(e) => return node_err(err, &format!("loan {payload_len} bytes"), e),
        };
        if header_len > 0 {
            std::ptr::copy_nonoverlapping(h.as_ptr(), (s.user_header_mut() as *mut CustomHeaderMarker).cast::<u8>(), header_len);
        }
        let dst = s.payload_mut();
        if pl.len() > dst.len() {
            return set_err(err, VR_ERR, format!("iceoryx2: loaned {} bytes for a {}-byte payload", dst.len(), pl.len()));
        }
        std::ptr::copy_nonoverlapping(pl.as_ptr(), dst.as_mut_ptr().cast::<u8>(), pl.len());
        let s = s.assume_init();
        match s.send() {
            Ok(n) => {
                if !delivered.is_null() {
                    *delivered = n;
                }
                VR_OK
            }
            Err(e) => node_err(err, "send", e),
        }
    }))
}

/// The number of subscribers connected to the publisher's service right now
/// (any process), for a replay that waits for its subscribers.
#[no_mangle]
pub unsafe extern "C" fn vr_ipub_subscribers(p: *const IPub) -> usize {
    let p = &*p;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.svc.dynamic_config().number_of_subscribers())).unwrap_or(0)
}

/// Writes the publisher's unique id (16 bytes, little-endian u128) into out.
#[no_mangle]
pub unsafe extern "C" fn vr_ipub_id(p: *const IPub, out: *mut u8) {
    let id = (*p).publisher.id().value().to_le_bytes();
    std::ptr::copy_nonoverlapping(id.as_ptr(), out, 16);
}

#[no_mangle]
pub unsafe extern "C" fn vr_ipub_free(p: *mut IPub) {
    if !p.is_null() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(Box::from_raw(p))));
    }
}
