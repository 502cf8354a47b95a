/* vrlog_native.h: the C ABI of native/ (Rust, over the official zenoh and
 * iceoryx2 crates). Hand-written; keep in step with native/src/*.rs.
 *
 * Conventions
 * - Fallible calls return a status (VR_OK or VR_ERR_*) and, on error, write a
 *   malloc'ed message into *err that the caller frees with vr_string_free.
 * - Handles are opaque; each has exactly one *_free / *_close.
 * - Batch calls (vr_zsub_next_batch, vr_isub_next_batch) hand out descriptor
 *   arrays that point into memory owned by the handle. They stay valid until
 *   the next batch call on the same handle or its free; copy them out first.
 *   Only one thread may call a handle's batch function at a time.
 * - Receive stamps: recv_wall_ns = CLOCK_REALTIME, recv_mono_ns =
 *   CLOCK_MONOTONIC, both taken in the native layer as the sample arrives.
 */
#ifndef VRLOG_NATIVE_H
#define VRLOG_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VR_OK 0
#define VR_ERR 1
#define VR_ERR_INVALID 2
#define VR_ERR_NOT_FOUND 3
#define VR_ERR_CLOSED 4
#define VR_ERR_PANIC 5
#define VR_ERR_INCOMPATIBLE 6
#define VR_TIMEOUT 7

void vr_string_free(char *s);
int64_t vr_mono_ns(void);
/* bit 0: zenoh, bit 1: iceoryx2 */
uint32_t vr_features(void);

/* ------------------------------------------------------------------ zenoh */

typedef struct vr_zsession vr_zsession;
typedef struct vr_zsub vr_zsub;
typedef struct vr_zpub vr_zpub;
typedef struct vr_zqueryable vr_zqueryable;
typedef struct vr_zquery_handle vr_zquery_handle;
typedef struct vr_zreplies vr_zreplies;
typedef struct vr_ztoken vr_ztoken;

#define VR_ZF_ATTACHMENT 1
#define VR_ZF_TIMESTAMP 2
#define VR_ZF_SOURCE 4
#define VR_ZF_DELETE 8
#define VR_ZF_ERROR 16

typedef struct vr_zsample {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *payload;
    size_t payload_len;
    const uint8_t *attachment;
    size_t attachment_len;
    const uint8_t *encoding;
    size_t encoding_len;
    uint64_t ts_ntp64;      /* zenoh HLC time (NTP64) when VR_ZF_TIMESTAMP */
    uint64_t source_sn;     /* when VR_ZF_SOURCE */
    int64_t recv_wall_ns;
    int64_t recv_mono_ns;
    uint8_t ts_id[16];      /* HLC id, little-endian, ts_id_len significant bytes */
    uint8_t source_zid[16]; /* publisher's zenoh id, source_zid_len significant bytes */
    uint32_t source_eid;    /* publisher's entity id within its session */
    uint8_t ts_id_len;
    uint8_t source_zid_len;
    uint8_t flags;          /* VR_ZF_* */
    uint8_t _pad;
} vr_zsample;

typedef struct vr_zquery {
    vr_zquery_handle *handle;
    const uint8_t *key;
    size_t key_len;
    const uint8_t *params;
    size_t params_len;
    const uint8_t *payload;
    size_t payload_len;
    int64_t recv_wall_ns;
    int64_t recv_mono_ns;
    uint8_t has_payload;
} vr_zquery;

/* config_file may be NULL; keys[i]=values[i] are applied with insert_json5. */
int vr_zsession_open(const char *config_file, const char *const *keys, const char *const *values,
                     size_t n, vr_zsession **out, char **err);
void vr_zsession_close(vr_zsession *s);
size_t vr_zsession_zid(const vr_zsession *s, uint8_t out[16]);
/* The session's effective configuration value at key, as JSON, into *out (free with
 * vr_string_free); a key the configuration lacks is VR_ERR_INVALID. */
int vr_zsession_config_get(const vr_zsession *s, const char *key, char **out, char **err);
/* Zenoh ids (16 LE bytes each) of the routers (routers != 0) or peers connected now, up to cap
 * of them into out[cap * 16]; returns the number connected (may exceed cap). */
size_t vr_zsession_connected(const vr_zsession *s, uint8_t routers, uint8_t *out, size_t cap);

int vr_zsub_declare(const vr_zsession *s, const char *keyexpr, size_t queue_cap, size_t queue_bytes,
                    vr_zsub **out, char **err);
int vr_zsub_next_batch(vr_zsub *sub, size_t max, int64_t timeout_ns, const vr_zsample **out,
                       size_t *out_n);
void vr_zsub_wake(const vr_zsub *sub);
void vr_zsub_stats(const vr_zsub *sub, uint64_t *dropped, uint64_t *received);
void vr_zsub_shutdown(vr_zsub *sub);
void vr_zsub_free(vr_zsub *sub);

/* priority 0 = default, else zenoh priority 1..7 */
int vr_zpub_declare(const vr_zsession *s, const char *keyexpr, const char *encoding,
                    int congestion_block, int express, int priority, int source_info,
                    vr_zpub **out, char **err);
int vr_zpub_put(const vr_zpub *p, const uint8_t *payload, size_t payload_len,
                const uint8_t *attachment, size_t attachment_len, int has_attachment, char **err);
/* Like vr_zpub_put, with the given source info (zenoh id of 1..16 bytes,
 * entity id, sequence number) instead of the publisher's own. */
int vr_zpub_put_as(const vr_zpub *p, const uint8_t *payload, size_t payload_len,
                   const uint8_t *attachment, size_t attachment_len, int has_attachment,
                   const uint8_t *source_zid, size_t source_zid_len, uint32_t source_eid,
                   uint64_t source_sn, char **err);
/* Writes 1 to *out when a subscriber matching the publisher's key is known
 * right now (zenoh's matching status), else 0. */
int vr_zpub_matching(const vr_zpub *p, uint8_t *out, char **err);
void vr_zpub_free(vr_zpub *p);

int vr_zqbl_declare(const vr_zsession *s, const char *keyexpr, int complete, size_t queue_cap,
                    vr_zqueryable **out, char **err);
int vr_zqbl_next(const vr_zqueryable *q, int64_t timeout_ns, vr_zquery *out);
void vr_zqbl_wake(const vr_zqueryable *q);
void vr_zqbl_free(vr_zqueryable *q);
/* keyexpr NULL or "" = the query's key expression */
int vr_zquery_reply(vr_zquery_handle *h, const char *keyexpr, const uint8_t *payload,
                    size_t payload_len, const char *encoding, const uint8_t *attachment,
                    size_t attachment_len, int has_attachment, int is_error, char **err);
void vr_zquery_free(vr_zquery_handle *h);

int vr_zget(const vr_zsession *s, const char *selector, const uint8_t *payload, size_t payload_len,
            int has_payload, const char *encoding, uint64_t timeout_ms, vr_zreplies **out,
            char **err);
int vr_zliveliness_get(const vr_zsession *s, const char *keyexpr, uint64_t timeout_ms,
                       vr_zreplies **out, char **err);
size_t vr_zreplies_items(const vr_zreplies *r, const vr_zsample **out);
void vr_zreplies_free(vr_zreplies *r);

int vr_ztoken_declare(const vr_zsession *s, const char *keyexpr, vr_ztoken **out, char **err);
void vr_ztoken_free(vr_ztoken *t);

/* --------------------------------------------------------------- iceoryx2 */

typedef struct vr_inode vr_inode;
typedef struct vr_isub vr_isub;
typedef struct vr_ipub vr_ipub;

typedef struct vr_itype_detail {
    int32_t variant; /* 0 FixedSize, 1 Dynamic (slice of size-byte elements) */
    const char *type_name;
    size_t size;
    size_t alignment;
} vr_itype_detail;

/* 0 (or -1 for safe_overflow) = unspecified */
typedef struct vr_iservice_opts {
    size_t max_publishers;
    size_t max_subscribers;
    size_t max_nodes;
    size_t history_size;
    size_t subscriber_max_buffer_size;
    size_t subscriber_max_borrowed_samples;
    int32_t safe_overflow;
} vr_iservice_opts;

/* a sample in a slot of the subscriber's memory (header, payload and the
 * publisher id back to back from header), the caller's until vr_isub_release */
typedef struct vr_isample {
    const uint8_t *header;
    size_t header_len;
    const uint8_t *payload;
    size_t payload_len;
    uint8_t publisher_id[16]; /* UniquePublisherId, u128 little-endian */
    int64_t recv_wall_ns;
    int64_t recv_mono_ns;
    uint32_t slot;
    uint64_t drain;       /* the polling thread's drain that took it */
    uint32_t drain_index; /* 1-based, among that drain's samples of its publisher */
    uint32_t dropped_before; /* the publisher's samples dropped (no slot) since its previous one */
    uint32_t prev_drain_len; /* first sample after the drain of its previous one: that drain's length */
    uint32_t after_hold; /* 1: the subscriber held (no free slot) since the publisher's previous sample */
} vr_isample;

int vr_inode_create(const char *name, vr_inode **out, char **err);
void vr_inode_free(vr_inode *n);
/* removes the stale resources of nodes whose processes died */
void vr_inode_cleanup_dead(const vr_inode *n, uint64_t *cleaned, uint64_t *failed);
/* JSON array of service objects; free *out_json with vr_string_free */
int vr_inode_list_services(const vr_inode *n, char **out_json, char **err);
int vr_inode_service_details(const vr_inode *n, const char *service, char **out_json, char **err);

int vr_isub_create(const vr_inode *n, const char *service, size_t buffer_size, size_t queue_cap,
                   size_t queue_bytes, int64_t poll_ns, vr_isub **out, char **err);
int vr_isub_next_batch(vr_isub *s, size_t max, int64_t timeout_ns, const vr_isample **out,
                       size_t *out_n);
void vr_isub_release(const vr_isub *s, const uint32_t *slots, size_t n);
/* the drain of the publisher's last queued sample and that drain's length so far */
void vr_isub_drain_len(const vr_isub *s, const uint8_t *publisher_id, uint64_t *drain, uint32_t *len);
/* hold != 0: no free slot leaves samples in the service's buffer (safe
 * overflow then replaces the oldest) instead of taking and dropping them */
void vr_isub_set_hold(const vr_isub *s, int32_t hold);
/* 1 while samples wait in the service's buffer for want of a slot */
int32_t vr_isub_holding(const vr_isub *s);
void vr_isub_wake(const vr_isub *s);
void vr_isub_stats(const vr_isub *s, uint64_t *dropped, uint64_t *received);
char *vr_isub_last_error(const vr_isub *s);
void vr_isub_shutdown(vr_isub *s);
void vr_isub_free(vr_isub *s);

/* allocation_strategy: 0 PowerOfTwo, 1 BestFit, 2 Static; backpressure (a
   subscriber's full buffer on a service without safe overflow): 0 iceoryx2's
   default, 1 retry until delivered (send blocks), 2 discard */
int vr_ipub_create(const vr_inode *n, const char *service, const vr_itype_detail *payload,
                   const vr_itype_detail *user_header, const vr_iservice_opts *opts,
                   size_t initial_max_slice_len, int allocation_strategy, size_t max_loaned_samples,
                   int backpressure, vr_ipub **out, char **err);
int vr_ipub_send(const vr_ipub *p, const uint8_t *header, size_t header_len, const uint8_t *payload,
                 size_t payload_len, size_t *delivered, char **err);
/* The number of subscribers connected to the publisher's service right now. */
size_t vr_ipub_subscribers(const vr_ipub *p);
void vr_ipub_id(const vr_ipub *p, uint8_t out[16]);
void vr_ipub_free(vr_ipub *p);

#ifdef __cplusplus
}
#endif
#endif
