/*
 * nvmf4j_rdma: JNI binding of librdmacm + libibverbs for io.nvmf4j.rdma.Native.
 *
 * Conventions (shared by every file of the library):
 *  - handles are the native pointers cast to jlong; 0 is "no object";
 *  - calls that can fail return a negative errno (jint) or, for calls that
 *    create an object, the handle or a negative errno (user-space pointers are
 *    positive on every 64-bit Linux ABI we build for);
 *  - nothing here throws a Java exception except the control-plane helpers
 *    that create Java objects (buffers, strings) and run out of memory;
 *  - structs that Java edits in place (work requests, completions, CM events)
 *    live in memory allocated here, behind a small header that records their
 *    kind and capacity so that a mismatched or out-of-range call fails with
 *    -EINVAL instead of scribbling; their sizes and field offsets are exported
 *    through Native.layout().
 */
#ifndef NVMF4J_RDMA_H
#define NVMF4J_RDMA_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <jni.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Bumped whenever a native signature or an exported layout key changes;
 * must equal io.nvmf4j.rdma.Native.ABI_VERSION. */
#define NVMF4J_RDMA_ABI_VERSION 2

#define H2P(type, h) ((type *)(uintptr_t)(h))
#define P2H(p) ((jlong)(uintptr_t)(p))
#define NEG_ERRNO() ((jint)-(errno ? errno : EIO))
#define REQUIRE(cond) do { if (!(cond)) return -EINVAL; } while (0)

/* Header in front of every array allocated by nvmf4j_array_alloc. */
struct nvmf4j_array_hdr {
	int32_t bad_index;  /* post*: index of the first WR not posted after a failure */
	int32_t capacity;   /* number of entries */
	int32_t max_sge;    /* SGEs per work request (WR arrays only) */
	int32_t kind;       /* NVMF4J_ARRAY_* */
	uint8_t pad[48];
};
#define NVMF4J_ARRAY_HDR_SIZE 64

enum {
	NVMF4J_ARRAY_SEND_WR = 0x53575231, /* "SWR1" */
	NVMF4J_ARRAY_RECV_WR = 0x52575231, /* "RWR1" */
	NVMF4J_ARRAY_WC      = 0x57435231, /* "WCR1" */
	NVMF4J_ARRAY_CM_EVENT = 0x434d4531 /* "CME1" */
};

/* A CM event as Java reads it: copied out of struct rdma_cm_event. */
struct nvmf4j_cm_event {
	uint64_t event;      /* struct rdma_cm_event *, for ackCmEvent */
	uint64_t id;         /* struct rdma_cm_id * */
	uint64_t listen_id;  /* struct rdma_cm_id * of the listener (CONNECT_REQUEST) */
	int32_t type;
	int32_t status;
	uint32_t qp_num;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t private_data_len;
	uint8_t pad;
	uint8_t private_data[256];
};

/* Returns the header of an array handle if it has the given kind, else NULL. */
struct nvmf4j_array_hdr *nvmf4j_array(jlong base, int32_t kind);
static inline void *nvmf4j_array_data(struct nvmf4j_array_hdr *h)
{
	return (char *)h + NVMF4J_ARRAY_HDR_SIZE;
}

/* Registration tables, one per source file. */
extern const JNINativeMethod nvmf4j_core_methods[];
extern const int nvmf4j_core_method_count;
extern const JNINativeMethod nvmf4j_cm_methods[];
extern const int nvmf4j_cm_method_count;
extern const JNINativeMethod nvmf4j_verbs_methods[];
extern const int nvmf4j_verbs_method_count;
extern const JNINativeMethod nvmf4j_arena_methods[];
extern const int nvmf4j_arena_method_count;

/* Appends "key=value\n" lines describing the file's structs and constants. */
typedef void (*nvmf4j_emit_fn)(void *ctx, const char *key, long long value);
void nvmf4j_cm_layout(nvmf4j_emit_fn emit, void *ctx);
void nvmf4j_verbs_layout(nvmf4j_emit_fn emit, void *ctx);

#endif
