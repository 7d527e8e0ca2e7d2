/*
 * nvmf4j_uring: an io_uring ring for the file block device (io.nvmf4j.bdev.FileRing), one per poll group.
 *
 * The ring is set up with the raw system calls and the kernel's own ABI header (<linux/io_uring.h>), not
 * liburing: what the target needs is setup, the three mappings and io_uring_enter, about a hundred lines,
 * and a library that links liburing would fail to load wherever liburing is missing, taking the worker
 * thread fallback down with it (the fallback exists for exactly the machines that lack io_uring).
 *
 * Java fills submission entries and reads completion entries in place, through direct ByteBuffers over the
 * rings' mappings and the offsets exported here (uringLayout); the only native call on the data path is
 * io_uring_enter, once per poll-group pass with entries to submit. The SQ index array is set once to the
 * identity, so entry i of the SQE array sits at slot i of the ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jni.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425 /* the same number on every architecture */
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif

/* Region numbers of uringRegion. */
#define REGION_SQ 0
#define REGION_CQ 1
#define REGION_SQES 2

struct ring {
	int fd;
	struct io_uring_params p;
	void *sq;
	size_t sq_len;
	void *cq; /* == sq with IORING_FEAT_SINGLE_MMAP */
	size_t cq_len;
	void *sqes;
	size_t sqes_len;
};

static void ring_free(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq && r->cq != MAP_FAILED && r->cq != r->sq)
		munmap(r->cq, r->cq_len);
	if (r->sq && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* Whether the kernel knows every operation the file device submits (IORING_REGISTER_PROBE, 5.6+). */
static int probe_ops(int fd)
{
	static const int needed[] = { IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_FALLOCATE };
	size_t len = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *probe = calloc(1, len);
	if (!probe)
		return -ENOMEM;
	int rc = (int)syscall(__NR_io_uring_register, fd, IORING_REGISTER_PROBE, probe, 256);
	if (rc < 0) {
		rc = -errno;
	} else {
		for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
			int op = needed[i];
			if (op > probe->last_op || !(probe->ops[op].flags & IO_URING_OP_SUPPORTED)) {
				rc = -EOPNOTSUPP;
				break;
			}
		}
	}
	free(probe);
	return rc < 0 ? rc : 0;
}

/*
 * A ring of `entries` submission entries (rounded up to a power of two by the kernel; twice as many completion
 * entries), mapped; the handle, or a negative errno: ENOSYS where the kernel has no io_uring, EPERM where it is
 * turned off (kernel.io_uring_disabled) or a seccomp filter refuses it, EOPNOTSUPP where an operation is missing.
 */
static jlong uring_setup(JNIEnv *env, jclass cls, jint entries)
{
	struct ring *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	/*
	 * COOP_TASKRUN (5.19): a completion's task work waits for the poll group's next system call (it makes one
	 * every pass; a sleeping one is still woken) instead of an inter-processor interrupt forcing it into the
	 * kernel mid-pass. SINGLE_ISSUER (6.0): only the thread that made the ring submits to it, which the
	 * owning poll group guarantees; the kernel then skips the locking of shared submitters. A kernel that
	 * knows neither refuses the flags (EINVAL): the ring is made without them.
	 */
	r->p.flags = IORING_SETUP_CLAMP | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
	int fd = (int)syscall(__NR_io_uring_setup, (unsigned)entries, &r->p);
	if (fd < 0 && errno == EINVAL) {
		memset(&r->p, 0, sizeof(r->p));
		r->p.flags = IORING_SETUP_CLAMP;
		fd = (int)syscall(__NR_io_uring_setup, (unsigned)entries, &r->p);
	}
	if (fd < 0) {
		int err = errno;
		free(r);
		return -(err ? err : EIO);
	}
	r->fd = fd;
	int rc = probe_ops(fd);
	if (rc < 0) {
		ring_free(r);
		return rc;
	}
	struct io_uring_params *p = &r->p;
	r->sq_len = p->sq_off.array + p->sq_entries * sizeof(uint32_t);
	r->cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		if (r->cq_len > r->sq_len)
			r->sq_len = r->cq_len;
		r->cq_len = r->sq_len;
	}
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	if (r->sq == MAP_FAILED) {
		rc = -errno;
		ring_free(r);
		return rc;
	}
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		r->cq = r->sq;
	} else {
		r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
		if (r->cq == MAP_FAILED) {
			rc = -errno;
			ring_free(r);
			return rc;
		}
	}
	r->sqes_len = p->sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED) {
		rc = -errno;
		ring_free(r);
		return rc;
	}
	uint32_t *array = (uint32_t *)((char *)r->sq + p->sq_off.array);
	for (uint32_t i = 0; i < p->sq_entries; i++)
		array[i] = i;
	return (jlong)(uintptr_t)r;
}

static jint uring_fd(JNIEnv *env, jclass cls, jlong h)
{
	return ((struct ring *)(uintptr_t)h)->fd;
}

/* A direct ByteBuffer over one mapping (control path: once per region). */
static jobject uring_region(JNIEnv *env, jclass cls, jlong h, jint which)
{
	struct ring *r = (struct ring *)(uintptr_t)h;
	switch (which) {
	case REGION_SQ:
		return (*env)->NewDirectByteBuffer(env, r->sq, (jlong)r->sq_len);
	case REGION_CQ:
		return (*env)->NewDirectByteBuffer(env, r->cq, (jlong)r->cq_len);
	case REGION_SQES:
		return (*env)->NewDirectByteBuffer(env, r->sqes, (jlong)r->sqes_len);
	default:
		return NULL;
	}
}

/*
 * The ring's geometry and the ABI's offsets and constants, in the order FileRing's Layout reads them: the
 * ring's from its setup parameters, the entries' from the header (so Java types none of them in).
 */
static jintArray uring_layout(JNIEnv *env, jclass cls, jlong h)
{
	struct ring *r = (struct ring *)(uintptr_t)h;
	struct io_uring_params *p = &r->p;
	const jint values[] = {
		(jint)p->sq_entries, (jint)p->cq_entries,
		(jint)p->sq_off.head, (jint)p->sq_off.tail, (jint)p->sq_off.ring_mask,
		(jint)p->cq_off.head, (jint)p->cq_off.tail, (jint)p->cq_off.ring_mask, (jint)p->cq_off.cqes,
		(jint)sizeof(struct io_uring_sqe),
		(jint)offsetof(struct io_uring_sqe, opcode), (jint)offsetof(struct io_uring_sqe, flags),
		(jint)offsetof(struct io_uring_sqe, ioprio), (jint)offsetof(struct io_uring_sqe, fd),
		(jint)offsetof(struct io_uring_sqe, off), (jint)offsetof(struct io_uring_sqe, addr),
		(jint)offsetof(struct io_uring_sqe, len), (jint)offsetof(struct io_uring_sqe, rw_flags),
		(jint)offsetof(struct io_uring_sqe, user_data), (jint)offsetof(struct io_uring_sqe, buf_index),
		(jint)sizeof(struct io_uring_cqe),
		(jint)offsetof(struct io_uring_cqe, user_data), (jint)offsetof(struct io_uring_cqe, res),
		IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_FALLOCATE,
		RWF_DSYNC, IORING_FSYNC_DATASYNC,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	jint n = (jint)(sizeof(values) / sizeof(values[0]));
	jintArray out = (*env)->NewIntArray(env, n);
	if (out)
		(*env)->SetIntArrayRegion(env, out, 0, n, values);
	return out;
}

/*
 * io_uring_enter(to_submit): hands the kernel the entries Java queued (their tail is already published);
 * never waits for completions. Returns how many were taken or a negative errno (EAGAIN, EBUSY: try again later).
 */
static jint uring_enter(JNIEnv *env, jclass cls, jint fd, jint to_submit)
{
	int rc;
	do {
		rc = (int)syscall(__NR_io_uring_enter, fd, (unsigned)to_submit, 0U, 0U, NULL, 0);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : rc;
}

/* Unmaps the ring and closes its descriptor (the kernel ends what is still in flight). */
static void uring_close(JNIEnv *env, jclass cls, jlong h)
{
	if (h)
		ring_free((struct ring *)(uintptr_t)h);
}

static const JNINativeMethod uring_methods[] = {
	{ "uringSetup", "(I)J", (void *)uring_setup },
	{ "uringFd", "(J)I", (void *)uring_fd },
	{ "uringRegion", "(JI)Ljava/nio/ByteBuffer;", (void *)uring_region },
	{ "uringLayout", "(J)[I", (void *)uring_layout },
	{ "uringEnter", "(II)I", (void *)uring_enter },
	{ "uringClose", "(J)V", (void *)uring_close },
};

/* Registers the ring's natives on FileNative (called from JNI_OnLoad in nvmf4j_bdev.c). */
int nvmf4j_uring_register(JNIEnv *env, jclass cls)
{
	return (*env)->RegisterNatives(env, cls, uring_methods, sizeof(uring_methods) / sizeof(uring_methods[0]));
}
