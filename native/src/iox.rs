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

/// One received sample, in a slot of the subscriber's memory: user header,
/// payload and the 16-byte publisher id back to back from `header`.
#[repr(C)]
pub struct VrISample {
    pub header: *const u8,
    pub header_len: usize,
    pub payload: *const u8,
    pub payload_len: usize,
    pub publisher_id: [u8; 16],
    pub recv_wall_ns: i64,
    pub recv_mono_ns: i64,
    /// The slot to hand back with vr_isub_release.
    pub slot: u32,
    /// The polling thread's drain (a run of receives from a first sample to
    /// an empty buffer) that took the sample, and its 1-based position among
    /// that drain's samples of its publisher: a drain that takes at least
    /// the subscriber's buffer size from one publisher found the buffer
    /// full at some point, when iceoryx2's safe overflow may have replaced
    /// the oldest sample; a shorter drain proves nothing was replaced.
    pub drain: u64,
    pub drain_index: u32,
    /// Samples of the same publisher the polling thread took and dropped
    /// (no free slot) since the previous one it queued: counted in
    /// vr_isub_stats already, and the reason for that much of a seq gap.
    pub dropped_before: u32,
    /// For the first sample of a publisher after the drain of its previous
    /// queued sample: how many of that publisher's samples that drain took
    /// in all (queued or dropped); 0 otherwise.
    pub prev_drain_len: u32,
    /// 1: the polling thread held (vr_isub_set_hold: no free slot) since
    /// the publisher's previous queued sample, leaving samples in the
    /// service's buffer: a seq gap before this sample is what iceoryx2's
    /// safe overflow replaced meanwhile, whatever the drain's length.
    pub after_hold: u32,
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
    slot: u32,
    header_len: usize,
    payload_len: usize,
    publisher_id: [u8; 16],
    wall: i64,
    mono: i64,
    drain: u64,
    drain_index: u32,
    dropped_before: u32,
    prev_drain_len: u32,
    after_hold: u32,
}

/// The subscriber's memory for samples: at most `cap_slots` buffers holding
/// at most `cap_bytes` in all. A buffer, once made, is kept (its pages
/// faulted in once) and reused for every sample that fits, so a steady
/// stream allocates nothing; a sample stays in its slot from the polling
/// thread's copy until Go releases it (after writing it to a log, when the
/// caller borrows it), so the slots bound what the subscriber holds,
/// however far behind its reader falls. No free slot: the sample is
/// dropped and counted.
struct Slots {
    inner: Mutex<SlotsInner>,
}

struct SlotsInner {
    bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
    bytes: usize,
    cap_slots: usize,
    cap_bytes: usize,
}

impl Slots {
    fn new(cap_slots: usize, cap_bytes: usize) -> Self {
        Slots {
            inner: Mutex::new(SlotsInner {
                bufs: Vec::new(),
                free: Vec::new(),
                bytes: 0,
                cap_slots: cap_slots.max(1),
                cap_bytes: if cap_bytes == 0 { usize::MAX } else { cap_bytes },
            }),
        }
    }

    /// Whether take(need) would find a slot now.
    fn has_room(&self, need: usize) -> bool {
        let g = self.inner.lock().unwrap();
        let held = g.bufs.len() - g.free.len();
        if g.free.iter().any(|&i| g.bufs[i as usize].len() >= need) {
            return true;
        }
        if g.bufs.len() < g.cap_slots && (held == 0 || g.bytes + need <= g.cap_bytes) {
            return true;
        }
        g.free.iter().any(|&i| held == 0 || g.bytes - g.bufs[i as usize].len() + need <= g.cap_bytes)
    }

    /// A slot of at least `need` bytes and its memory, or None.
    fn take(&self, need: usize) -> Option<(u32, *mut u8)> {
        let mut g = self.inner.lock().unwrap();
        let g = &mut *g;
        // The smallest free slot that fits.
        let fit = g.free.iter().enumerate().filter(|(_, &i)| g.bufs[i as usize].len() >= need).min_by_key(|(_, &i)| g.bufs[i as usize].len());
        if let Some((k, &i)) = fit {
            g.free.swap_remove(k);
            return Some((i, g.bufs[i as usize].as_mut_ptr()));
        }
        // Room for one more (one sample is always let in, whatever its size,
        // when nothing else is held).
        let held = g.bufs.len() - g.free.len();
        if g.bufs.len() < g.cap_slots && (held == 0 || g.bytes + need <= g.cap_bytes) {
            g.bufs.push(faulted(need));
            g.bytes += need;
            let i = (g.bufs.len() - 1) as u32;
            return Some((i, g.bufs[i as usize].as_mut_ptr()));
        }
        // A free slot too small, grown in place.
        if let Some(k) = (0..g.free.len()).max_by_key(|&k| g.bufs[g.free[k] as usize].len()) {
            let i = g.free[k] as usize;
            let old = g.bufs[i].len();
            if held == 0 || g.bytes - old + need <= g.cap_bytes {
                g.free.swap_remove(k);
                g.bufs[i] = faulted(need);
                g.bytes = g.bytes - old + need;
                return Some((i as u32, g.bufs[i].as_mut_ptr()));
            }
        }
        None
    }

    fn give(&self, slot: u32) {
        let mut g = self.inner.lock().unwrap();
        if (slot as usize) < g.bufs.len() && !g.free.contains(&slot) {
            g.free.push(slot);
        }
    }
}

/// A buffer of n bytes whose pages are touched now, not on the first copy
/// into it (a fault per page there would stall the polling thread).
fn faulted(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0u8);
    v
}

/// One publisher's place in the polling thread's drains.
#[derive(Default)]
struct PubDrains {
    id: u128,
    drain: u64,   // the last drain with a sample of it
    count: u32,   // its samples in that drain
    q_drain: u64, // the drain of its last queued sample
    q_len: u32,   // its samples in q_drain, final once the drain is over
    dropped: u32, // dropped (no slot) since its last queued sample
    held: bool,   // the thread held since its last queued sample
}

pub struct ISub {
    q: Arc<BatchQueue<IItem>>,
    slots: Arc<Slots>,
    pubs: Arc<Mutex<Vec<PubDrains>>>,
    stop: Arc<AtomicBool>,
    hold: Arc<AtomicBool>,
    holding: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
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
        // Every queued or lent sample holds a slot: the slots bound both.
        let q = Arc::new(BatchQueue::new(queue_cap, 0));
        let slots = Arc::new(Slots::new(queue_cap, queue_bytes));
        let stop = Arc::new(AtomicBool::new(false));
        let last_err = Arc::new(Mutex::new(None));
        let pubs: Arc<Mutex<Vec<PubDrains>>> = Arc::new(Mutex::new(Vec::new()));
        let hold = Arc::new(AtomicBool::new(false));
        let holding = Arc::new(AtomicBool::new(false));
        let (q2, slots2, stop2, le2, pubs2, hold2, holding2) =
            (q.clone(), slots.clone(), stop.clone(), last_err.clone(), pubs.clone(), hold.clone(), holding.clone());
        let poll = Duration::from_nanos(poll_ns.max(1000) as u64);
        let th = std::thread::Builder::new()
            .name("vrlog-iox2-sub".into())
            .spawn(move || {
                let _svc = svc; // keep the service open as long as the port
                let mut drain = 0u64;
                let mut emptied = true; // the buffer was seen empty since the last drain began
                let mut last_need = 0usize; // the size of the last sample's slot
                while !stop2.load(Ordering::Relaxed) {
                    let mut got = false;
                    let mut held = false;
                    loop {
                        // Holding (vr_isub_set_hold): with no slot for a
                        // sample like the last, leave the samples in the
                        // service's buffer, not seen empty: the drain goes on.
                        if hold2.load(Ordering::Relaxed) && !slots2.has_room(last_need) {
                            held = true;
                            for p in pubs2.lock().unwrap().iter_mut() {
                                p.held = true;
                            }
                            break;
                        }
                        match sub.receive() {
                            Ok(Some(sample)) => {
                                got = true;
                                if emptied {
                                    emptied = false;
                                    drain += 1;
                                }
                                let wall = wall_ns();
                                let mono = mono_ns();
                                let origin = sample.origin().value();
                                let mut pubs = pubs2.lock().unwrap();
                                let st = match pubs.iter().position(|p| p.id == origin) {
                                    Some(k) => &mut pubs[k],
                                    None => {
                                        pubs.push(PubDrains { id: origin, ..Default::default() });
                                        pubs.last_mut().unwrap()
                                    }
                                };
                                if st.drain != drain {
                                    st.drain = drain;
                                    st.count = 0;
                                }
                                st.count += 1;
                                let drain_index = st.count;
                                if st.q_drain == drain {
                                    st.q_len = st.count;
                                }
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
                                let id = origin.to_le_bytes();
                                last_need = header_len + pl.len() + 16;
                                let Some((slot, dst)) = slots2.take(last_need) else {
                                    // no room: release at once and count, without copying
                                    st.dropped += 1;
                                    drop(pubs);
                                    drop(sample);
                                    q2.count_drop();
                                    continue;
                                };
                                let dropped_before = std::mem::take(&mut st.dropped);
                                let prev_drain_len = if st.q_drain != drain { st.q_len } else { 0 };
                                let after_hold = std::mem::take(&mut st.held) as u32;
                                st.q_drain = drain;
                                st.q_len = st.count;
                                drop(pubs);
                                unsafe {
                                    std::ptr::copy_nonoverlapping(hdr.as_ptr(), dst, header_len);
                                    std::ptr::copy_nonoverlapping(pl.as_ptr(), dst.add(header_len), pl.len());
                                    std::ptr::copy_nonoverlapping(id.as_ptr(), dst.add(header_len + pl.len()), 16);
                                }
                                let payload_len = pl.len();
                                drop(sample); // release the shared-memory sample right after the copy
                                let item = IItem { slot, header_len, payload_len, publisher_id: id, wall, mono, drain, drain_index, dropped_before, prev_drain_len, after_hold };
                                if let Err(it) = q2.push(item, 0) {
                                    slots2.give(it.slot); // closed
                                }
                            }
                            Ok(None) => {
                                emptied = true;
                                break;
                            }
                            Err(e) => {
                                // not seen empty: the drain goes on
                                *le2.lock().unwrap() = Some(format!("{e:?}"));
                                break;
                            }
                        }
                    }
                    holding2.store(held, Ordering::Relaxed);
                    if !got || held {
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
            slots,
            pubs,
            stop,
            hold,
            holding,
            thread: Some(th),
            batch: Vec::new(),
            descs: Vec::new(),
            last_err,
        }));
        VR_OK
    }))
}

/// Hands out up to `max` queued samples (the previous batch's descriptors
/// are gone then; the slots stay the caller's until vr_isub_release).
#[no_mangle]
pub unsafe extern "C" fn vr_isub_next_batch(
    s: *mut ISub,
    max: usize,
    timeout_ns: i64,
    out: *mut *const VrISample,
    out_n: *mut usize,
) -> i32 {
    let s = &mut *s;
    s.batch.clear();
    s.descs.clear();
    *out_n = 0;
    match s.q.drain(&mut s.batch, max, Duration::from_nanos(timeout_ns.max(0) as u64), |_| 0) {
        Drained::Items => {
            let g = s.slots.inner.lock().unwrap();
            for it in &s.batch {
                let base = g.bufs[it.slot as usize].as_ptr();
                s.descs.push(VrISample {
                    header: base,
                    header_len: it.header_len,
                    payload: base.add(it.header_len),
                    payload_len: it.payload_len,
                    publisher_id: it.publisher_id,
                    recv_wall_ns: it.wall,
                    recv_mono_ns: it.mono,
                    slot: it.slot,
                    drain: it.drain,
                    drain_index: it.drain_index,
                    dropped_before: it.dropped_before,
                    prev_drain_len: it.prev_drain_len,
                    after_hold: it.after_hold,
                });
            }
            drop(g);
            *out = c_ptr(&s.descs);
            *out_n = s.descs.len();
            VR_OK
        }
        Drained::Timeout => VR_TIMEOUT,
        Drained::Closed => VR_ERR_CLOSED,
    }
}

/// The drain of a publisher's last queued sample and how many of its samples
/// that drain has taken (queued or dropped): the length of its last drain
/// once the stream has ended. 0, 0 for a publisher never seen.
#[no_mangle]
pub unsafe extern "C" fn vr_isub_drain_len(s: *const ISub, publisher_id: *const u8, drain: *mut u64, len: *mut u32) {
    let s = &*s;
    let mut id = [0u8; 16];
    std::ptr::copy_nonoverlapping(publisher_id, id.as_mut_ptr(), 16);
    let id = u128::from_le_bytes(id);
    let pubs = s.pubs.lock().unwrap();
    match pubs.iter().find(|p| p.id == id) {
        Some(p) => {
            *drain = p.q_drain;
            *len = p.q_len;
        }
        None => {
            *drain = 0;
            *len = 0;
        }
    }
}

/// Hands slots back once their samples are no longer read.
#[no_mangle]
pub unsafe extern "C" fn vr_isub_release(s: *const ISub, slots: *const u32, n: usize) {
    let s = &*s;
    for &slot in std::slice::from_raw_parts(slots, n) {
        s.slots.give(slot);
    }
}

/// hold != 0: when no slot is free, the polling thread leaves samples in
/// the service's buffer instead of taking and dropping them (with safe
/// overflow the service then replaces the oldest: a loss the drains locate).
#[no_mangle]
pub unsafe extern "C" fn vr_isub_set_hold(s: *const ISub, hold: i32) {
    (*s).hold.store(hold != 0, Ordering::Relaxed);
}

/// 1 while the polling thread leaves samples in the service's buffer for
/// want of a slot (holding), 0 otherwise.
#[no_mangle]
pub unsafe extern "C" fn vr_isub_holding(s: *const ISub) -> i32 {
    (*s).holding.load(Ordering::Relaxed) as i32
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
    drop(Box::from_raw(s)); // the slots' memory with it: Go frees only once none is lent
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
    backpressure: i32,
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
        match backpressure {
            1 => pb = pb.backpressure_strategy(BackpressureStrategy::RetryUntilDelivered),
            2 => pb = pb.backpressure_strategy(BackpressureStrategy::DiscardData),
            _ => {}
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
