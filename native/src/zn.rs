//! zenoh over a C ABI: sessions, batched subscribers, publishers, queryables,
//! get, and liveliness tokens. Every handle is a Box turned into a raw pointer;
//! the matching *_free/close function takes it back.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zenoh::bytes::{Encoding, ZBytes};
use zenoh::key_expr::KeyExpr;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::{CongestionControl, Priority};
use zenoh::query::{Query, Queryable, Reply};
use zenoh::sample::{Sample, SampleKind, SourceInfo};
use zenoh::session::{EntityGlobalId, ZenohId};
use zenoh::time::Timestamp;
use zenoh::{Config, Session, Wait};

use zenoh_protocol::core::EntityGlobalIdProto;

use crate::common::*;

/// Significant length of a little-endian id (zenoh ids drop trailing zero bytes).
fn id_len(b: &[u8; 16]) -> u8 {
    (16 - b.iter().rev().take_while(|&&x| x == 0).count()).max(1) as u8
}

pub struct ZSession {
    session: Session,
}

/// What the callback keeps of a sample until Go drains it.
struct ZItem {
    key: KeyExpr<'static>,
    encoding: Encoding,
    data: Vec<u8>, // payload ++ attachment
    payload_len: usize,
    has_attachment: bool,
    kind: SampleKind,
    ts: Option<Timestamp>,
    source: Option<([u8; 16], u8, u32, u64)>,
    wall: i64,
    mono: i64,
}

impl ZItem {
    fn from_sample(s: &Sample, wall: i64, mono: i64) -> ZItem {
        let payload = s.payload();
        let att = s.attachment();
        let plen = payload.len();
        let mut data = Vec::with_capacity(plen + att.map(|a| a.len()).unwrap_or(0));
        for sl in payload.slices() {
            data.extend_from_slice(sl);
        }
        if let Some(a) = att {
            for sl in a.slices() {
                data.extend_from_slice(sl);
            }
        }
        let source = s.source_info().map(|si| {
            let id = si.source_id();
            let zid = id.zid();
            let b = zid.to_le_bytes();
            (b, id_len(&b), id.eid(), si.source_sn() as u64)
        });
        ZItem {
            key: s.key_expr().clone(),
            encoding: s.encoding().clone(),
            data,
            payload_len: plen,
            has_attachment: att.is_some(),
            kind: s.kind(),
            ts: s.timestamp().cloned(),
            source,
            wall,
            mono,
        }
    }
}

/// One received sample as Go sees it; pointers stay valid until the next
/// batch call on the same handle (or its free).
#[repr(C)]
pub struct VrZSample {
    pub key: *const u8,
    pub key_len: usize,
    pub payload: *const u8,
    pub payload_len: usize,
    pub attachment: *const u8,
    pub attachment_len: usize,
    pub encoding: *const u8,
    pub encoding_len: usize,
    pub ts_ntp64: u64,
    pub source_sn: u64,
    pub recv_wall_ns: i64,
    pub recv_mono_ns: i64,
    pub ts_id: [u8; 16],
    pub source_zid: [u8; 16],
    pub source_eid: u32,
    pub ts_id_len: u8,
    pub source_zid_len: u8,
    /// bit0 attachment present, bit1 timestamp present, bit2 source info present,
    /// bit3 kind is DELETE, bit4 this is an error reply (get only).
    pub flags: u8,
    pub _pad: u8,
}

pub const ZF_ATTACHMENT: u8 = 1;
pub const ZF_TIMESTAMP: u8 = 2;
pub const ZF_SOURCE: u8 = 4;
pub const ZF_DELETE: u8 = 8;
pub const ZF_ERROR: u8 = 16;

/// Stringifies encodings with a one-entry cache (streams rarely change encoding).
#[derive(Default)]
struct EncCache {
    last: Option<(Encoding, Arc<str>)>,
}

impl EncCache {
    fn get(&mut self, e: &Encoding) -> Arc<str> {
        if let Some((le, ls)) = &self.last {
            if le == e {
                return ls.clone();
            }
        }
        let s: Arc<str> = Arc::from(e.to_string());
        self.last = Some((e.clone(), s.clone()));
        s
    }
}

fn desc(it: &ZItem, enc: &Arc<str>) -> VrZSample {
    let key = it.key.as_str();
    let mut d = VrZSample {
        key: c_ptr(key.as_bytes()),
        key_len: key.len(),
        payload: c_ptr(&it.data[..it.payload_len]),
        payload_len: it.payload_len,
        attachment: c_ptr(&it.data[it.payload_len..]),
        attachment_len: it.data.len() - it.payload_len,
        encoding: c_ptr(enc.as_bytes()),
        encoding_len: enc.len(),
        ts_ntp64: 0,
        source_sn: 0,
        recv_wall_ns: it.wall,
        recv_mono_ns: it.mono,
        ts_id: [0; 16],
        source_zid: [0; 16],
        source_eid: 0,
        ts_id_len: 0,
        source_zid_len: 0,
        flags: 0,
        _pad: 0,
    };
    if it.has_attachment {
        d.flags |= ZF_ATTACHMENT;
    }
    if let Some(ts) = &it.ts {
        d.flags |= ZF_TIMESTAMP;
        d.ts_ntp64 = ts.get_time().as_u64();
        let id = ts.get_id();
        d.ts_id = id.to_le_bytes();
        d.ts_id_len = id.size() as u8;
    }
    if let Some((zid, n, eid, sn)) = &it.source {
        d.flags |= ZF_SOURCE;
        d.source_zid = *zid;
        d.source_zid_len = *n;
        d.source_eid = *eid;
        d.source_sn = *sn;
    }
    if it.kind == SampleKind::Delete {
        d.flags |= ZF_DELETE;
    }
    d
}

/// A batch of items plus their descriptors, owned by a handle between calls.
#[derive(Default)]
struct Batch {
    items: Vec<ZItem>,
    encs: Vec<Arc<str>>,
    descs: Vec<VrZSample>,
    cache: EncCache,
}

impl Batch {
    fn reset(&mut self) {
        self.items.clear();
        self.encs.clear();
        self.descs.clear();
    }
    fn build(&mut self) {
        self.encs.clear();
        self.descs.clear();
        for it in &self.items {
            let e = self.cache.get(&it.encoding);
            self.encs.push(e);
        }
        for (it, e) in self.items.iter().zip(self.encs.iter()) {
            self.descs.push(desc(it, e));
        }
    }
}

pub struct ZSub {
    q: Arc<BatchQueue<ZItem>>,
    sub: Option<Subscriber<()>>,
    batch: Batch,
}

pub struct ZPub {
    publisher: Publisher<'static>,
    sn: AtomicU64,
    source_info: bool,
}

pub struct ZQueryable {
    q: Arc<BatchQueue<(Query, i64, i64)>>,
    qbl: Option<Queryable<()>>,
}

#[repr(C)]
pub struct VrZQuery {
    pub handle: *mut ZQueryHolder,
    pub key: *const u8,
    pub key_len: usize,
    pub params: *const u8,
    pub params_len: usize,
    pub payload: *const u8,
    pub payload_len: usize,
    pub recv_wall_ns: i64,
    pub recv_mono_ns: i64,
    pub has_payload: u8,
}

pub struct ZQueryHolder {
    query: Query,
    payload: Vec<u8>,
    params: String,
    has_payload_flag: bool,
}

pub struct ZReplies {
    batch: Batch,
}

fn zerr(err: *mut *mut c_char, what: &str, e: impl std::fmt::Display) -> i32 {
    set_err(err, VR_ERR, format!("{what}: {e}"))
}

/// Opens a session from an optional JSON5 file plus key/value JSON5 overrides
/// (applied in order with Config::insert_json5).
#[no_mangle]
pub unsafe extern "C" fn vr_zsession_open(
    config_file: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    out: *mut *mut ZSession,
    err: *mut *mut c_char,
) -> i32 {
    let cf = cstr(config_file).map(|s| s.to_string());
    let mut kv = Vec::with_capacity(n);
    for i in 0..n {
        let (k, v) = (cstr(*keys.add(i)), cstr(*values.add(i)));
        match (k, v) {
            (Some(k), Some(v)) => kv.push((k.to_string(), v.to_string())),
            _ => return set_err(err, VR_ERR_INVALID, "zenoh: config key or value is not UTF-8"),
        }
    }
    guard(err, move || {
        let mut cfg = match &cf {
            Some(p) if !p.is_empty() => match Config::from_file(p) {
                Ok(c) => c,
                Err(e) => {
                    return set_err(err, VR_ERR_INVALID, format!("zenoh: config file {p}: {e}"))
                }
            },
            _ => Config::default(),
        };
        for (k, v) in &kv {
            if let Err(e) = cfg.insert_json5(k, v) {
                return set_err(err, VR_ERR_INVALID, format!("zenoh: config {k}={v}: {e}"));
            }
        }
        match zenoh::open(cfg).wait() {
            Ok(session) => {
                *out = Box::into_raw(Box::new(ZSession { session }));
                VR_OK
            }
            Err(e) => zerr(err, "zenoh: open session", e),
        }
    })
}

/// Closes the session (undeclaring what is left) and frees it.
#[no_mangle]
pub unsafe extern "C" fn vr_zsession_close(s: *mut ZSession) {
    if s.is_null() {
        return;
    }
    let s = Box::from_raw(s);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = s.session.close().wait();
    }));
}

/// Writes the session's zenoh id (little-endian bytes) into out[16]; returns its length.
#[no_mangle]
pub unsafe extern "C" fn vr_zsession_zid(s: *const ZSession, out: *mut u8) -> usize {
    let zid = (*s).session.zid();
    let b = zid.to_le_bytes();
    std::ptr::copy_nonoverlapping(b.as_ptr(), out, 16);
    id_len(&b) as usize
}

/// Writes the session's effective configuration value at key (a zenoh
/// config path such as "transport/auth/usrpwd/user") as JSON into *out (free
/// with vr_string_free); a key the configuration does not have is VR_ERR_INVALID.
#[no_mangle]
pub unsafe extern "C" fn vr_zsession_config_get(
    s: *const ZSession,
    key: *const c_char,
    out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(key).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: config key is not UTF-8");
    };
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| match session.config().get(&key) {
        Ok(v) => {
            *out = CString::new(v.replace('\0', " ")).unwrap_or_default().into_raw();
            VR_OK
        }
        Err(e) => set_err(err, VR_ERR_INVALID, format!("zenoh: config {key:?}: {e}")),
    }))
}

/// Writes the zenoh ids (16 little-endian bytes each) of the routers
/// (`routers` != 0) or peers the session is connected to right now into
/// out[cap * 16]; returns how many there are, which may exceed cap. A client
/// that lost its router reports none until it has reconnected.
#[no_mangle]
pub unsafe extern "C" fn vr_zsession_connected(s: *const ZSession, routers: u8, out: *mut u8, cap: usize) -> usize {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let info = (*s).session.info();
        let ids: Vec<_> = if routers != 0 {
            info.routers_zid().wait().collect()
        } else {
            info.peers_zid().wait().collect()
        };
        for (i, id) in ids.iter().take(cap).enumerate() {
            std::ptr::copy_nonoverlapping(id.to_le_bytes().as_ptr(), out.add(i * 16), 16);
        }
        ids.len()
    }))
    .unwrap_or(0)
}

#[no_mangle]
pub unsafe extern "C" fn vr_zsub_declare(
    s: *const ZSession,
    keyexpr: *const c_char,
    queue_cap: usize,
    queue_bytes: usize,
    out: *mut *mut ZSub,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(keyexpr).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: key expression is not UTF-8");
    };
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let ke = match KeyExpr::try_from(key.clone()) {
            Ok(k) => k,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: key expression {key:?}: {e}")),
        };
        let q = Arc::new(BatchQueue::new(queue_cap, queue_bytes));
        let q2 = q.clone();
        let res = session
            .declare_subscriber(ke)
            .callback(move |sample: Sample| {
                let wall = wall_ns();
                let mono = mono_ns();
                let it = ZItem::from_sample(&sample, wall, mono);
                let n = it.data.len();
                let _ = q2.push(it, n);
            })
            .wait();
        match res {
            Ok(sub) => {
                *out = Box::into_raw(Box::new(ZSub { q, sub: Some(sub), batch: Batch::default() }));
                VR_OK
            }
            Err(e) => zerr(err, &format!("zenoh: subscribe {key:?}"), e),
        }
    }))
}

/// Waits up to timeout_ns for samples and hands out up to max of them. The
/// descriptors (and the memory they point to) stay valid until the next call
/// on this subscriber or its free. Returns VR_OK, VR_TIMEOUT or VR_ERR_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn vr_zsub_next_batch(
    sub: *mut ZSub,
    max: usize,
    timeout_ns: i64,
    out: *mut *const VrZSample,
    out_n: *mut usize,
) -> i32 {
    let sub = &mut *sub;
    sub.batch.reset();
    *out_n = 0;
    let r = sub.q.drain(
        &mut sub.batch.items,
        max,
        Duration::from_nanos(timeout_ns.max(0) as u64),
        |it| it.data.len(),
    );
    match r {
        Drained::Items => {
            sub.batch.build();
            *out = c_ptr(&sub.batch.descs);
            *out_n = sub.batch.descs.len();
            VR_OK
        }
        Drained::Timeout => VR_TIMEOUT,
        Drained::Closed => VR_ERR_CLOSED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn vr_zsub_wake(sub: *const ZSub) {
    (*sub).q.wake();
}

/// Samples dropped because the queue was full, and samples received in total.
#[no_mangle]
pub unsafe extern "C" fn vr_zsub_stats(sub: *const ZSub, dropped: *mut u64, received: *mut u64) {
    let sub = &*sub;
    *dropped = sub.q.dropped.load(Ordering::Relaxed);
    *received = sub.q.received.load(Ordering::Relaxed);
}

/// Undeclares the subscriber and wakes blocked next_batch calls (which then
/// return VR_ERR_CLOSED once the queue is empty). Does not free.
#[no_mangle]
pub unsafe extern "C" fn vr_zsub_shutdown(sub: *mut ZSub) {
    let sub = &mut *sub;
    if let Some(s) = sub.sub.take() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = s.undeclare().wait();
        }));
    }
    sub.q.close();
}

#[no_mangle]
pub unsafe extern "C" fn vr_zsub_free(sub: *mut ZSub) {
    if sub.is_null() {
        return;
    }
    vr_zsub_shutdown(sub);
    drop(Box::from_raw(sub));
}

#[no_mangle]
pub unsafe extern "C" fn vr_zpub_declare(
    s: *const ZSession,
    keyexpr: *const c_char,
    encoding: *const c_char,
    congestion_block: i32,
    express: i32,
    priority: i32,
    source_info: i32,
    out: *mut *mut ZPub,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(keyexpr).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: key expression is not UTF-8");
    };
    let enc = cstr(encoding).unwrap_or("").to_string();
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let ke = match KeyExpr::try_from(key.clone()) {
            Ok(k) => k,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: key expression {key:?}: {e}")),
        };
        let prio = match priority {
            0 => Priority::default(),
            p => match Priority::try_from(p as u8) {
                Ok(p) => p,
                Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: priority {p}: {e}")),
            },
        };
        let mut b = session
            .declare_publisher(ke)
            .congestion_control(if congestion_block != 0 {
                CongestionControl::Block
            } else {
                CongestionControl::Drop
            })
            .express(express != 0)
            .priority(prio);
        if !enc.is_empty() {
            b = b.encoding(Encoding::from(enc.as_str()));
        }
        match b.wait() {
            Ok(p) => {
                *out = Box::into_raw(Box::new(ZPub {
                    publisher: p,
                    sn: AtomicU64::new(0),
                    source_info: source_info != 0,
                }));
                VR_OK
            }
            Err(e) => zerr(err, &format!("zenoh: declare publisher {key:?}"), e),
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn vr_zpub_put(
    p: *const ZPub,
    payload: *const u8,
    payload_len: usize,
    attachment: *const u8,
    attachment_len: usize,
    has_attachment: i32,
    err: *mut *mut c_char,
) -> i32 {
    let p = &*p;
    let source = p.source_info.then(|| SourceInfo::new(p.publisher.id(), p.sn.fetch_add(1, Ordering::Relaxed) as _));
    put(p, payload, payload_len, attachment, attachment_len, has_attachment, source, err)
}

/// Builds a source id from recorded bytes: the zenoh id (1..16 bytes, as
/// received) and the entity id.
fn source_id(zid: &[u8], eid: u32) -> Result<EntityGlobalId, String> {
    let z = ZenohId::try_from(zid).map_err(|e| format!("zenoh: source zenoh id of {} bytes: {e}", zid.len()))?;
    Ok(EntityGlobalIdProto { zid: z.into(), eid }.into())
}

/// Puts with the given source info (zenoh id, entity id, sequence number)
/// instead of the publisher's own: what a replay republishes as recorded.
#[no_mangle]
pub unsafe extern "C" fn vr_zpub_put_as(
    p: *const ZPub,
    payload: *const u8,
    payload_len: usize,
    attachment: *const u8,
    attachment_len: usize,
    has_attachment: i32,
    source_zid: *const u8,
    source_zid_len: usize,
    source_eid: u32,
    source_sn: u64,
    err: *mut *mut c_char,
) -> i32 {
    let sid = match source_id(bytes(source_zid, source_zid_len), source_eid) {
        Ok(id) => id,
        Err(e) => return set_err(err, VR_ERR_INVALID, e),
    };
    let Ok(sn) = u32::try_from(source_sn) else {
        return set_err(err, VR_ERR_INVALID, format!("zenoh: source sequence number {source_sn} exceeds zenoh's 32 bits"));
    };
    put(&*p, payload, payload_len, attachment, attachment_len, has_attachment, Some(SourceInfo::new(sid, sn)), err)
}

/// One put: the payload, an optional attachment and optional source info.
unsafe fn put(
    p: &ZPub,
    payload: *const u8,
    payload_len: usize,
    attachment: *const u8,
    attachment_len: usize,
    has_attachment: i32,
    source: Option<SourceInfo>,
    err: *mut *mut c_char,
) -> i32 {
    let data = bytes(payload, payload_len).to_vec();
    let att = if has_attachment != 0 {
        Some(bytes(attachment, attachment_len).to_vec())
    } else {
        None
    };
    guard(err, std::panic::AssertUnwindSafe(|| {
        let mut b = p.publisher.put(data);
        if let Some(a) = att {
            b = b.attachment(a);
        }
        if let Some(si) = source {
            b = b.source_info(si);
        }
        match b.wait() {
            Ok(()) => VR_OK,
            Err(e) => zerr(err, "zenoh: put", e),
        }
    }))
}

/// Whether a subscriber matching the publisher's key is known to the session
/// right now (zenoh's publisher matching status): 1 yes, 0 no. A replay
/// waits on it before its first record (--wait-for-subscribers).
#[no_mangle]
pub unsafe extern "C" fn vr_zpub_matching(p: *const ZPub, out: *mut u8, err: *mut *mut c_char) -> i32 {
    let p = &*p;
    guard(err, std::panic::AssertUnwindSafe(|| match p.publisher.matching_status().wait() {
        Ok(st) => {
            *out = st.matching() as u8;
            VR_OK
        }
        Err(e) => zerr(err, "zenoh: matching status", e),
    }))
}

#[no_mangle]
pub unsafe extern "C" fn vr_zpub_free(p: *mut ZPub) {
    if p.is_null() {
        return;
    }
    let p = Box::from_raw(p);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _ = p.publisher.undeclare().wait();
    }));
}

/// Declares a queryable whose queries Go takes one by one with vr_zqbl_next.
#[no_mangle]
pub unsafe extern "C" fn vr_zqbl_declare(
    s: *const ZSession,
    keyexpr: *const c_char,
    complete: i32,
    queue_cap: usize,
    out: *mut *mut ZQueryable,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(keyexpr).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: key expression is not UTF-8");
    };
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let ke = match KeyExpr::try_from(key.clone()) {
            Ok(k) => k,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: key expression {key:?}: {e}")),
        };
        let q = Arc::new(BatchQueue::new(queue_cap, 0));
        let q2 = q.clone();
        let res = session
            .declare_queryable(ke)
            .complete(complete != 0)
            .callback(move |query: Query| {
                let _ = q2.push((query, wall_ns(), mono_ns()), 0);
            })
            .wait();
        match res {
            Ok(qbl) => {
                *out = Box::into_raw(Box::new(ZQueryable { q, qbl: Some(qbl) }));
                VR_OK
            }
            Err(e) => zerr(err, &format!("zenoh: declare queryable {key:?}"), e),
        }
    }))
}

/// Waits for the next query. On VR_OK, out->handle must be answered with
/// vr_zquery_reply* and then released with vr_zquery_free (which sends the
/// final reply marker to the querier).
#[no_mangle]
pub unsafe extern "C" fn vr_zqbl_next(
    qbl: *const ZQueryable,
    timeout_ns: i64,
    out: *mut VrZQuery,
) -> i32 {
    let qbl = &*qbl;
    let mut v = Vec::with_capacity(1);
    match qbl.q.drain(&mut v, 1, Duration::from_nanos(timeout_ns.max(0) as u64), |_| 0) {
        Drained::Items => {
            let (query, wall, mono) = v.pop().unwrap();
            let payload = query.payload().map(|p| p.to_bytes().into_owned());
            let params = query.parameters().as_str().to_string();
            let h = Box::new(ZQueryHolder {
                has_payload_flag: payload.is_some(),
                payload: payload.unwrap_or_default(),
                params,
                query,
            });
            let key = h.query.key_expr().as_str();
            let o = &mut *out;
            o.key = c_ptr(key.as_bytes());
            o.key_len = key.len();
            o.params = c_ptr(h.params.as_bytes());
            o.params_len = h.params.len();
            o.payload = c_ptr(&h.payload);
            o.payload_len = h.payload.len();
            o.has_payload = h.has_payload_flag as u8;
            o.recv_wall_ns = wall;
            o.recv_mono_ns = mono;
            o.handle = Box::into_raw(h);
            VR_OK
        }
        Drained::Timeout => VR_TIMEOUT,
        Drained::Closed => VR_ERR_CLOSED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn vr_zqbl_wake(qbl: *const ZQueryable) {
    (*qbl).q.wake();
}

#[no_mangle]
pub unsafe extern "C" fn vr_zqbl_free(qbl: *mut ZQueryable) {
    if qbl.is_null() {
        return;
    }
    let mut b = Box::from_raw(qbl);
    b.q.close();
    if let Some(q) = b.qbl.take() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = q.undeclare().wait();
        }));
    }
    drop(b.q.clear());
}

#[no_mangle]
pub unsafe extern "C" fn vr_zquery_reply(
    h: *mut ZQueryHolder,
    keyexpr: *const c_char,
    payload: *const u8,
    payload_len: usize,
    encoding: *const c_char,
    attachment: *const u8,
    attachment_len: usize,
    has_attachment: i32,
    is_error: i32,
    err: *mut *mut c_char,
) -> i32 {
    let h = &*h;
    let data = bytes(payload, payload_len).to_vec();
    let key = cstr(keyexpr).unwrap_or("").to_string();
    let enc = cstr(encoding).unwrap_or("").to_string();
    let att = if has_attachment != 0 { Some(bytes(attachment, attachment_len).to_vec()) } else { None };
    guard(err, std::panic::AssertUnwindSafe(|| {
        let r = if is_error != 0 {
            let mut b = h.query.reply_err(data);
            if !enc.is_empty() {
                b = b.encoding(Encoding::from(enc.as_str()));
            }
            b.wait()
        } else {
            let key = if key.is_empty() { h.query.key_expr().as_str().to_string() } else { key.clone() };
            let mut b = h.query.reply(key, data);
            if !enc.is_empty() {
                b = b.encoding(Encoding::from(enc.as_str()));
            }
            if let Some(a) = att {
                b = b.attachment(a);
            }
            b.wait()
        };
        match r {
            Ok(()) => VR_OK,
            Err(e) => zerr(err, "zenoh: reply", e),
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn vr_zquery_free(h: *mut ZQueryHolder) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

fn collect_replies(rx: impl Iterator<Item = Reply>) -> ZReplies {
    let mut b = Batch::default();
    let mut errflags = Vec::new();
    for reply in rx {
        let wall = wall_ns();
        let mono = mono_ns();
        match reply.result() {
            Ok(sample) => {
                b.items.push(ZItem::from_sample(sample, wall, mono));
                errflags.push(false);
            }
            Err(e) => {
                let data = e.payload().to_bytes().into_owned();
                let n = data.len();
                b.items.push(ZItem {
                    key: KeyExpr::try_from("error".to_string()).unwrap(),
                    encoding: e.encoding().clone(),
                    data,
                    payload_len: n,
                    has_attachment: false,
                    kind: SampleKind::Put,
                    ts: None,
                    source: None,
                    wall,
                    mono,
                });
                errflags.push(true);
            }
        }
    }
    b.build();
    for (d, e) in b.descs.iter_mut().zip(errflags) {
        if e {
            d.flags |= ZF_ERROR;
            d.key_len = 0;
        }
    }
    ZReplies { batch: b }
}

/// Issues a get and waits (up to timeout_ms) for all replies.
#[no_mangle]
pub unsafe extern "C" fn vr_zget(
    s: *const ZSession,
    selector: *const c_char,
    payload: *const u8,
    payload_len: usize,
    has_payload: i32,
    encoding: *const c_char,
    timeout_ms: u64,
    out: *mut *mut ZReplies,
    err: *mut *mut c_char,
) -> i32 {
    let Some(sel) = cstr(selector).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: selector is not UTF-8");
    };
    let data = if has_payload != 0 { Some(bytes(payload, payload_len).to_vec()) } else { None };
    let enc = cstr(encoding).unwrap_or("").to_string();
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let mut b = session.get(sel.as_str()).timeout(Duration::from_millis(timeout_ms));
        if let Some(d) = data {
            b = b.payload(d);
        }
        if !enc.is_empty() {
            b = b.encoding(Encoding::from(enc.as_str()));
        }
        match b.wait() {
            Ok(rx) => {
                *out = Box::into_raw(Box::new(collect_replies(rx.iter())));
                VR_OK
            }
            Err(e) => set_err(err, VR_ERR_INVALID, format!("zenoh: get {sel:?}: {e}")),
        }
    }))
}

/// Queries the liveliness tokens matching keyexpr (each reply's key is a token's key).
#[no_mangle]
pub unsafe extern "C" fn vr_zliveliness_get(
    s: *const ZSession,
    keyexpr: *const c_char,
    timeout_ms: u64,
    out: *mut *mut ZReplies,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(keyexpr).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: key expression is not UTF-8");
    };
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let ke = match KeyExpr::try_from(key.clone()) {
            Ok(k) => k,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: key expression {key:?}: {e}")),
        };
        match session.liveliness().get(ke).timeout(Duration::from_millis(timeout_ms)).wait() {
            Ok(rx) => {
                *out = Box::into_raw(Box::new(collect_replies(rx.iter())));
                VR_OK
            }
            Err(e) => zerr(err, &format!("zenoh: liveliness get {key:?}"), e),
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn vr_zreplies_items(r: *const ZReplies, out: *mut *const VrZSample) -> usize {
    *out = c_ptr(&(*r).batch.descs);
    (*r).batch.descs.len()
}

#[no_mangle]
pub unsafe extern "C" fn vr_zreplies_free(r: *mut ZReplies) {
    if !r.is_null() {
        drop(Box::from_raw(r));
    }
}

pub struct ZToken {
    token: Option<LivelinessToken>,
}

#[no_mangle]
pub unsafe extern "C" fn vr_ztoken_declare(
    s: *const ZSession,
    keyexpr: *const c_char,
    out: *mut *mut ZToken,
    err: *mut *mut c_char,
) -> i32 {
    let Some(key) = cstr(keyexpr).map(|k| k.to_string()) else {
        return set_err(err, VR_ERR_INVALID, "zenoh: key expression is not UTF-8");
    };
    let session = &(*s).session;
    guard(err, std::panic::AssertUnwindSafe(|| {
        let ke = match KeyExpr::try_from(key.clone()) {
            Ok(k) => k,
            Err(e) => return set_err(err, VR_ERR_INVALID, format!("zenoh: key expression {key:?}: {e}")),
        };
        match session.liveliness().declare_token(ke).wait() {
            Ok(t) => {
                *out = Box::into_raw(Box::new(ZToken { token: Some(t) }));
                VR_OK
            }
            Err(e) => zerr(err, &format!("zenoh: liveliness token {key:?}"), e),
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn vr_ztoken_free(t: *mut ZToken) {
    if t.is_null() {
        return;
    }
    let mut t = Box::from_raw(t);
    if let Some(tok) = t.token.take() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = tok.undeclare().wait();
        }));
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn s<T: Send>() {}
    s::<ZBytes>();
}
