/*
 * Library entry: JNI_OnLoad (version check + RegisterNatives), the layout
 * table, device enumeration, native arrays and fd helpers.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nvmf4j_rdma.h"
#include "nvmf4j_jni.h"

#define NATIVE_CLASS "io/nvmf4j/rdma/Native"

static jint abi_version(JNIEnv *env, jclass cls)
{
	return NVMF4J_RDMA_ABI_VERSION;
}

/* ---- layout table: "key=value\n" lines, parsed once by io.nvmf4j.rdma.Layout ---- */

struct text { char *buf; size_t len, cap; int overflow; };

static void emit_text(void *ctx, const char *key, long long value)
{
	struct text *t = ctx;
	int n = snprintf(t->buf + t->len, t->cap - t->len, "%s=%lld\n", key, value);
	if (n < 0 || (size_t)n >= t->cap - t->len)
		t->overflow = 1;
	else
		t->len += (size_t)n;
}

static void core_layout(nvmf4j_emit_fn emit, void *ctx)
{
	emit(ctx, "abi_version", NVMF4J_RDMA_ABI_VERSION);
	emit(ctx, "array.header_size", NVMF4J_ARRAY_HDR_SIZE);
	emit(ctx, "array.bad_index", offsetof(struct nvmf4j_array_hdr, bad_index));
	emit(ctx, "array.capacity", offsetof(struct nvmf4j_array_hdr, capacity));
	emit(ctx, "array.max_sge", offsetof(struct nvmf4j_array_hdr, max_sge));
	emit(ctx, "array.kind.send_wr", NVMF4J_ARRAY_SEND_WR);
	emit(ctx, "array.kind.recv_wr", NVMF4J_ARRAY_RECV_WR);
	emit(ctx, "array.kind.wc", NVMF4J_ARRAY_WC);
	emit(ctx, "array.kind.cm_event", NVMF4J_ARRAY_CM_EVENT);
	emit(ctx, "errno.EPERM", EPERM);
	emit(ctx, "errno.ENOENT", ENOENT);
	emit(ctx, "errno.EINTR", EINTR);
	emit(ctx, "errno.EIO", EIO);
	emit(ctx, "errno.EBADF", EBADF);
	emit(ctx, "errno.EAGAIN", EAGAIN);
	emit(ctx, "errno.ENOMEM", ENOMEM);
	emit(ctx, "errno.EBUSY", EBUSY);
	emit(ctx, "errno.ENODEV", ENODEV);
	emit(ctx, "errno.EINVAL", EINVAL);
	emit(ctx, "errno.ENOSYS", ENOSYS);
	emit(ctx, "errno.EOPNOTSUPP", EOPNOTSUPP);
	emit(ctx, "errno.EADDRINUSE", EADDRINUSE);
	emit(ctx, "errno.EADDRNOTAVAIL", EADDRNOTAVAIL);
	emit(ctx, "errno.ENETUNREACH", ENETUNREACH);
	emit(ctx, "errno.ECONNREFUSED", ECONNREFUSED);
	emit(ctx, "errno.ETIMEDOUT", ETIMEDOUT);
}

static jstring layout(JNIEnv *env, jclass cls)
{
	char buf[16384];
	struct text t = { buf, 0, sizeof(buf), 0 };
	core_layout(emit_text, &t);
	nvmf4j_cm_layout(emit_text, &t);
	nvmf4j_verbs_layout(emit_text, &t);
	if (t.overflow) {
		(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"),
				 "nvmf4j_rdma: layout table overflow");
		return NULL;
	}
	buf[t.len] = 0;
	return (*env)->NewStringUTF(env, buf);
}

/* ---- devices ---- */

/* Number of RDMA devices libibverbs sees, or a negative errno. */
static jint device_count(JNIEnv *env, jclass cls)
{
	int n = 0;
	errno = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return NEG_ERRNO();
	ibv_free_device_list(list);
	return n;
}

/* The verbs contexts librdmacm opened, one per device (owned by librdmacm). */
static jlongArray device_contexts(JNIEnv *env, jclass cls)
{
	int n = 0;
	struct ibv_context **list = rdma_get_devices(&n);
	jlongArray out = (*env)->NewLongArray(env, list ? n : 0);
	if (!out || !list) {
		if (list)
			rdma_free_devices(list);
		return out;
	}
	for (int i = 0; i < n; i++) {
		jlong h = P2H(list[i]);
		(*env)->SetLongArrayRegion(env, out, i, 1, &h);
	}
	rdma_free_devices(list);
	return out;
}

static jstring device_name(JNIEnv *env, jclass cls, jlong ctx)
{
	struct ibv_context *c = H2P(struct ibv_context, ctx);
	if (!c || !c->device)
		return NULL;
	return (*env)->NewStringUTF(env, ibv_get_device_name(c->device));
}

static jstring str_error(JNIEnv *env, jclass cls, jint err)
{
	char buf[128];
	int e = err < 0 ? -err : err;
	snprintf(buf, sizeof(buf), "%s", strerror(e));
	return (*env)->NewStringUTF(env, buf);
}

/* ---- native arrays ---- */

struct nvmf4j_array_hdr *nvmf4j_array(jlong base, int32_t kind)
{
	struct nvmf4j_array_hdr *h = H2P(struct nvmf4j_array_hdr, base);
	if (!h || h->kind != kind)
		return NULL;
	return h;
}

static size_t entry_size(int32_t kind, int32_t max_sge)
{
	switch (kind) {
	case NVMF4J_ARRAY_SEND_WR: return sizeof(struct ibv_send_wr) + (size_t)max_sge * sizeof(struct ibv_sge);
	case NVMF4J_ARRAY_RECV_WR: return sizeof(struct ibv_recv_wr) + (size_t)max_sge * sizeof(struct ibv_sge);
	case NVMF4J_ARRAY_WC: return sizeof(struct ibv_wc);
	case NVMF4J_ARRAY_CM_EVENT: return sizeof(struct nvmf4j_cm_event);
	default: return 0;
	}
}

/* Wires each WR's sg_list to its slice of the SGE region that follows the WRs. */
static void link_sges(struct nvmf4j_array_hdr *h)
{
	int32_t n = h->capacity, m = h->max_sge;
	if (h->kind == NVMF4J_ARRAY_SEND_WR) {
		struct ibv_send_wr *wr = nvmf4j_array_data(h);
		struct ibv_sge *sge = (struct ibv_sge *)(wr + n);
		for (int32_t i = 0; i < n; i++)
			wr[i].sg_list = m ? sge + (size_t)i * m : NULL;
	} else if (h->kind == NVMF4J_ARRAY_RECV_WR) {
		struct ibv_recv_wr *wr = nvmf4j_array_data(h);
		struct ibv_sge *sge = (struct ibv_sge *)(wr + n);
		for (int32_t i = 0; i < n; i++)
			wr[i].sg_list = m ? sge + (size_t)i * m : NULL;
	}
}

/* Allocates a zeroed, 64-byte aligned array; returns a direct buffer over header + entries. */
static jobject alloc_array(JNIEnv *env, jclass cls, jint kind, jint capacity, jint max_sge)
{
	size_t es = entry_size(kind, max_sge < 0 ? 0 : max_sge);
	if (!es || capacity <= 0 || max_sge < 0 || max_sge > 64 || (size_t)capacity > (size_t)(INT32_MAX / 2) / es)
		return NULL;
	size_t total = NVMF4J_ARRAY_HDR_SIZE + (size_t)capacity * es;
	void *mem = NULL;
	if (posix_memalign(&mem, 64, total))
		return NULL;
	memset(mem, 0, total);
	struct nvmf4j_array_hdr *h = mem;
	h->capacity = capacity;
	h->max_sge = max_sge;
	h->kind = kind;
	h->bad_index = -1;
	link_sges(h);
	jobject buf = (*env)->NewDirectByteBuffer(env, mem, (jlong)total);
	if (!buf)
		free(mem);
	return buf;
}

static jint free_array(JNIEnv *env, jclass cls, jlong base)
{
	struct nvmf4j_array_hdr *h = H2P(struct nvmf4j_array_hdr, base);
	REQUIRE(h);
	REQUIRE(h->kind == NVMF4J_ARRAY_SEND_WR || h->kind == NVMF4J_ARRAY_RECV_WR ||
		h->kind == NVMF4J_ARRAY_WC || h->kind == NVMF4J_ARRAY_CM_EVENT);
	h->kind = 0;
	free(h);
	return 0;
}

static jlong buffer_address(JNIEnv *env, jclass cls, jobject buf)
{
	return buf ? P2H((*env)->GetDirectBufferAddress(env, buf)) : 0;
}

/* ---- fd helpers ---- */

static jint set_non_blocking(JNIEnv *env, jclass cls, jint fd, jboolean on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return NEG_ERRNO();
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl) < 0 ? NEG_ERRNO() : 0;
}

/* poll(2) one fd for input: 1 readable, 0 timeout, negative errno. */
static jint poll_in(JNIEnv *env, jclass cls, jint fd, jint timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return NEG_ERRNO();
	if (r > 0 && (p.revents & POLLNVAL))
		return -EBADF;
	return r;
}

const JNINativeMethod nvmf4j_core_methods[] = {
	{ "abiVersion", "()I", (void *)abi_version },
	{ "layout", "()Ljava/lang/String;", (void *)layout },
	{ "deviceCount", "()I", (void *)device_count },
	{ "deviceContexts", "()[J", (void *)device_contexts },
	{ "deviceName", "(J)Ljava/lang/String;", (void *)device_name },
	{ "strerror", "(I)Ljava/lang/String;", (void *)str_error },
	{ "allocArray", "(III)Ljava/nio/ByteBuffer;", (void *)alloc_array },
	{ "freeArray", "(J)I", (void *)free_array },
	{ "bufferAddress", "(Ljava/nio/ByteBuffer;)J", (void *)buffer_address },
	{ "setNonBlocking", "(IZ)I", (void *)set_non_blocking },
	{ "pollIn", "(II)I", (void *)poll_in },
};
const int nvmf4j_core_method_count = sizeof(nvmf4j_core_methods) / sizeof(nvmf4j_core_methods[0]);

static int register_all(JNIEnv *env, jclass cls)
{
	const JNINativeMethod *tables[] = { nvmf4j_core_methods, nvmf4j_cm_methods, nvmf4j_verbs_methods,
					    nvmf4j_arena_methods };
	const int counts[] = { nvmf4j_core_method_count, nvmf4j_cm_method_count, nvmf4j_verbs_method_count,
			       nvmf4j_arena_method_count };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if ((*env)->RegisterNatives(env, cls, tables[i], counts[i]) != JNI_OK)
			return -1;
	return 0;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	jclass cls = nvmf4j_jni_checked_class(env, "nvmf4j_rdma", NATIVE_CLASS, NVMF4J_RDMA_ABI_VERSION);
	if (!cls)
		return JNI_ERR; /* the exception is pending */
	if (register_all(env, cls))
		return JNI_ERR; /* NoSuchMethodError pending */
	return JNI_VERSION_1_8;
}
