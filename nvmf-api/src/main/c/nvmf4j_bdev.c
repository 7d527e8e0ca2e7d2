/*
 * nvmf4j_bdev: the file system calls of the file block device (io.nvmf4j.os.FileNative) that Java's
 * FileChannel lacks: pwritev2(RWF_DSYNC) for FUA, fdatasync whose error is seen, fallocate (punch hole,
 * zero range, preallocation), BLKDISCARD / BLKZEROOUT on block devices, fstat's allocated blocks, and for the
 * reflink pool (ReflinkPool) the FICLONE ioctl and statvfs.
 *
 * Conventions (as in rdma-cm's nvmf4j_rdma): data-path calls take a file descriptor and native addresses,
 * return a count or a negative errno, never throw and never allocate; JNI_OnLoad checks the ABI version
 * against FileNative.ABI_VERSION and registers the natives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "nvmf4j_jni.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* Bumped whenever a native signature or an exported constant changes; must equal FileNative.ABI_VERSION. */
#define NVMF4J_BDEV_ABI_VERSION 7
#define NATIVE_CLASS "io/nvmf4j/os/FileNative"

/* The io_uring ring's natives (nvmf4j_uring.c), registered on the same class. */
int nvmf4j_uring_register(JNIEnv *env, jclass cls);

#define H2P(type, h) ((type *)(uintptr_t)(h))
#define NEG_ERRNO() ((jint)-(errno ? errno : EIO))

/* Open flags as FileNative passes them. */
#define OPEN_CREATE 1
#define OPEN_DIRECT 2
#define OPEN_READ_ONLY 4

/* File types fileType() reports. */
#define TYPE_OTHER 0
#define TYPE_REGULAR 1
#define TYPE_BLOCK 2

static jint abi_version(JNIEnv *env, jclass cls)
{
	return NVMF4J_BDEV_ABI_VERSION;
}

/* The errno values Java tests for, in FileNative's order. */
static jintArray errnos(JNIEnv *env, jclass cls)
{
	const jint values[] = { EOPNOTSUPP, EINVAL, EIO, ENOSPC, ENOTTY, ELOOP, EXDEV, ENOENT };
	jint n = (jint)(sizeof(values) / sizeof(values[0]));
	jintArray out = (*env)->NewIntArray(env, n);
	if (out)
		(*env)->SetIntArrayRegion(env, out, 0, n, values);
	return out;
}

static jstring str_error(JNIEnv *env, jclass cls, jint err)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", strerror(err < 0 ? -err : err));
	return (*env)->NewStringUTF(env, buf);
}

/*
 * open(2) flags from FileNative's OPEN_* bits: read-write (read-only and non-blocking with OPEN_READ_ONLY, so that a
 * FIFO put in a file's place cannot hold the open), close-on-exec, never following a final symbolic link.
 */
static int open_flags(jint flags)
{
	if (flags & OPEN_READ_ONLY)
		return O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;
	int oflags = O_RDWR | O_CLOEXEC | O_NOFOLLOW;
	if (flags & OPEN_CREATE)
		oflags |= O_CREAT;
	if (flags & OPEN_DIRECT)
		oflags |= O_DIRECT;
	return oflags;
}

/*
 * open(2) of an absolute path read-write (or as OPEN_READ_ONLY says), close-on-exec, always with O_NOFOLLOW (a
 * symbolic link as the last component fails with ELOOP); a new file gets mode 0600 (it holds a host's data).
 * Returns the descriptor or a negative errno.
 */
static jint open_file(JNIEnv *env, jclass cls, jstring path, jint flags)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p)
		return -ENOMEM;
	int fd = open(p, open_flags(flags), 0600);
	int err = errno;
	(*env)->ReleaseStringUTFChars(env, path, p);
	return fd < 0 ? -(err ? err : EIO) : fd;
}

/*
 * Without openat2 (kernels before 5.6): walks `rel` below `dirfd` one component at a time, each directory opened
 * with O_NOFOLLOW | O_DIRECTORY, the last with O_NOFOLLOW; a symbolic link anywhere fails with ELOOP (or ENOTDIR),
 * and ".." is refused (EXDEV, as RESOLVE_BENEATH answers it). `rel` is modified.
 */
static int open_walk(int dirfd, char *rel, int oflags)
{
	int cur = dirfd;
	char *save = NULL;
	char *comp = strtok_r(rel, "/", &save);
	int fd = -1;
	errno = ENOENT;
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (strcmp(comp, "..") == 0 || strcmp(comp, ".") == 0) {
			errno = EXDEV;
			fd = -1;
			break;
		}
		fd = next ? openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			  : openat(cur, comp, oflags, 0600);
		int err = errno;
		if (cur != dirfd)
			close(cur);
		errno = err;
		if (fd < 0 || !next)
			break;
		cur = fd;
		fd = -1;
		comp = next;
	}
	return fd;
}

/*
 * Opens `rel` (relative, no "." or "..") below the directory `dir` with no symbolic link on the way and none as the
 * last component: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or a walk of O_NOFOLLOW
 * opens where the kernel lacks openat2. `dir` itself (the operator's configured directory) is opened as named.
 * A new file gets mode 0600. Returns the descriptor or a negative errno (ELOOP: a symbolic link was met).
 */
static jint open_beneath(JNIEnv *env, jclass cls, jstring dir, jstring rel, jint flags)
{
	const char *d = (*env)->GetStringUTFChars(env, dir, NULL);
	if (!d)
		return -ENOMEM;
	int dirfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = errno;
	(*env)->ReleaseStringUTFChars(env, dir, d);
	if (dirfd < 0)
		return -(err ? err : EIO);
	const char *r = (*env)->GetStringUTFChars(env, rel, NULL);
	if (!r) {
		close(dirfd);
		return -ENOMEM;
	}
	int oflags = open_flags(flags);
	struct open_how how;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)oflags;
	how.mode = (oflags & O_CREAT) ? 0600 : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	int fd = (int)syscall(SYS_openat2, dirfd, r, &how, sizeof(how));
	err = errno;
	if (fd < 0 && err == ENOSYS) {
		char copy[4096];
		if (strlen(r) >= sizeof(copy)) {
			err = ENAMETOOLONG;
		} else {
			strcpy(copy, r);
			fd = open_walk(dirfd, copy, oflags);
			err = errno;
		}
	}
	(*env)->ReleaseStringUTFChars(env, rel, r);
	close(dirfd);
	return fd < 0 ? -(err ? err : EIO) : fd;
}

static jint close_file(JNIEnv *env, jclass cls, jint fd)
{
	return close(fd) < 0 ? NEG_ERRNO() : 0;
}

/* TYPE_REGULAR, TYPE_BLOCK or TYPE_OTHER, or a negative errno. */
static jint file_type(JNIEnv *env, jclass cls, jint fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NEG_ERRNO();
	return S_ISREG(st.st_mode) ? TYPE_REGULAR : S_ISBLK(st.st_mode) ? TYPE_BLOCK : TYPE_OTHER;
}

/* Size in bytes: st_size of a regular file, BLKGETSIZE64 of a block device; or a negative errno. */
static jlong file_size(JNIEnv *env, jclass cls, jint fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NEG_ERRNO();
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			return NEG_ERRNO();
		return (jlong)bytes;
	}
	return (jlong)st.st_size;
}

/* Bytes the file occupies on its medium (st_blocks x 512), or a negative errno. */
static jlong allocated_bytes(JNIEnv *env, jclass cls, jint fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NEG_ERRNO();
	return (jlong)st.st_blocks * 512;
}

/* ftruncate(2) to grow a regular file (sparse). */
static jint set_size(JNIEnv *env, jclass cls, jint fd, jlong size)
{
	return ftruncate(fd, (off_t)size) < 0 ? NEG_ERRNO() : 0;
}

/* Reads up to len bytes at off into addr, stopping at the end of the file. Returns the count read or -errno. */
static jint pread_up_to(JNIEnv *env, jclass cls, jint fd, jlong addr, jint len, jlong off)
{
	char *buf = H2P(char, addr);
	size_t done = 0;
	while (done < (size_t)len) {
		ssize_t n = pread(fd, buf + done, (size_t)len - done, (off_t)(off + (jlong)done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NEG_ERRNO();
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (jint)done;
}

/* Reads len bytes at off into addr; past the end of the file the rest is zero-filled. Returns len or -errno. */
static jint pread_full(JNIEnv *env, jclass cls, jint fd, jlong addr, jint len, jlong off)
{
	jint done = pread_up_to(env, cls, fd, addr, len, off);
	if (done < 0)
		return done;
	memset(H2P(char, addr) + done, 0, (size_t)(len - done));
	return len;
}

/* Set once pwritev2(RWF_DSYNC) turns out to be missing (kernel < 4.7): then pwrite + fdatasync. */
static volatile int no_rwf_dsync;

static ssize_t write_once(int fd, const char *buf, size_t len, off_t off, int dsync)
{
	if (dsync && !no_rwf_dsync) {
		struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
		ssize_t n = pwritev2(fd, &iov, 1, off, RWF_DSYNC);
		if (n >= 0 || (errno != EOPNOTSUPP && errno != ENOSYS))
			return n;
		no_rwf_dsync = 1;
	}
	return pwrite(fd, buf, len, off);
}

/*
 * Writes len bytes from addr at off. With dsync the data (and the metadata needed to read it) is on stable
 * media when this returns len: pwritev2(RWF_DSYNC), or pwrite then fdatasync where RWF_DSYNC is missing.
 * Returns len or a negative errno (with dsync an error may come from making the data durable).
 */
static jint pwrite_full(JNIEnv *env, jclass cls, jint fd, jlong addr, jint len, jlong off, jboolean dsync)
{
	const char *buf = H2P(const char, addr);
	size_t done = 0;
	while (done < (size_t)len) {
		ssize_t n = write_once(fd, buf + done, (size_t)len - done, (off_t)(off + (jlong)done), dsync);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return NEG_ERRNO();
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	if (dsync && no_rwf_dsync && fdatasync(fd) < 0)
		return NEG_ERRNO();
	return len;
}

static jint fdatasync_file(JNIEnv *env, jclass cls, jint fd)
{
	return fdatasync(fd) < 0 ? NEG_ERRNO() : 0;
}

/* fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE): the range is freed and reads zeros. */
static jint punch_hole(JNIEnv *env, jclass cls, jint fd, jlong off, jlong len)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0 ? NEG_ERRNO() : 0;
}

/* fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE): the range reads zeros and stays allocated. */
static jint zero_range(JNIEnv *env, jclass cls, jint fd, jlong off, jlong len)
{
	return fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0 ? NEG_ERRNO() : 0;
}

/* fallocate(mode 0): the range is allocated (a thick volume), reads what it read before; ENOSPC when it does not fit. */
static jint preallocate(JNIEnv *env, jclass cls, jint fd, jlong off, jlong len)
{
	return fallocate(fd, 0, (off_t)off, (off_t)len) < 0 ? NEG_ERRNO() : 0;
}

/*
 * ioctl(FICLONE): dst (opened for writing, empty) becomes a copy of the whole of src sharing its blocks (XFS with
 * reflink=1, btrfs); EOPNOTSUPP or EINVAL where the file system cannot, EXDEV across file systems.
 */
static jint clone_file(JNIEnv *env, jclass cls, jint src, jint dst)
{
	return ioctl(dst, FICLONE, src) < 0 ? NEG_ERRNO() : 0;
}

/*
 * statvfs(2) of a directory into out[0..2]: bytes in the file system, bytes free for an unprivileged user (f_bavail),
 * bytes free in all (f_bfree). 0 or a negative errno.
 */
static jint stat_fs(JNIEnv *env, jclass cls, jstring path, jlongArray out)
{
	const char *p = (*env)->GetStringUTFChars(env, path, NULL);
	if (!p)
		return -ENOMEM;
	struct statvfs st;
	int rc = statvfs(p, &st);
	int err = errno;
	(*env)->ReleaseStringUTFChars(env, path, p);
	if (rc < 0)
		return -(err ? err : EIO);
	jlong v[3] = { (jlong)(st.f_blocks * st.f_frsize), (jlong)(st.f_bavail * st.f_frsize),
		       (jlong)(st.f_bfree * st.f_frsize) };
	(*env)->SetLongArrayRegion(env, out, 0, 3, v);
	return 0;
}

static jint block_range_ioctl(int fd, unsigned long request, jlong off, jlong len)
{
	uint64_t range[2] = { (uint64_t)off, (uint64_t)len };
	return ioctl(fd, request, range) < 0 ? NEG_ERRNO() : 0;
}

/* ioctl(BLKDISCARD): the device may free the range; what it then reads depends on the device. */
static jint blk_discard(JNIEnv *env, jclass cls, jint fd, jlong off, jlong len)
{
	return block_range_ioctl(fd, BLKDISCARD, off, len);
}

/* ioctl(BLKZEROOUT): the range reads zeros (offloaded where the device can, else written by the kernel). */
static jint blk_zeroout(JNIEnv *env, jclass cls, jint fd, jlong off, jlong len)
{
	return block_range_ioctl(fd, BLKZEROOUT, off, len);
}

#define HUGE_ALIGN ((size_t)2 << 20)

/*
 * An anonymous private mapping of len bytes (rounded up to a page) at a 2 MiB-aligned address, with
 * MADV_HUGEPAGE when huge is set: transparent huge pages in the kernel's "madvise" mode (Debian's default)
 * back it with 2 MiB pages as it is first touched, so a random 4 KiB access of a large RAM device does not
 * miss the TLB every time. The address, or a negative errno. An madvise the kernel refuses (no THP) is ignored.
 */
static jlong map_anonymous(JNIEnv *env, jclass cls, jlong len, jboolean huge)
{
	long page = sysconf(_SC_PAGESIZE);
	if (len <= 0 || (uint64_t)len > SIZE_MAX - HUGE_ALIGN - (size_t)page)
		return -EINVAL;
	size_t want = ((size_t)len + (size_t)page - 1) & ~((size_t)page - 1);
	size_t total = want + HUGE_ALIGN;
	uint8_t *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NEG_ERRNO();
	uintptr_t start = ((uintptr_t)p + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
	size_t head = start - (uintptr_t)p;
	size_t tail = total - head - want;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((uint8_t *)start + want, tail);
	if (huge)
		(void)madvise((void *)start, want, MADV_HUGEPAGE);
	return (jlong)start;
}

/* munmap of what map_anonymous returned (len as given to it). */
static jint unmap(JNIEnv *env, jclass cls, jlong address, jlong len)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!address || len <= 0)
		return -EINVAL;
	size_t want = ((size_t)len + (size_t)page - 1) & ~((size_t)page - 1);
	return munmap((void *)(uintptr_t)address, want) < 0 ? NEG_ERRNO() : 0;
}

/*
 * memcpy of len bytes between native addresses the caller checked (the malloc device's copies of 4-16 KiB, where
 * glibc's vector copy is faster than the JVM's copy stub into a cold destination, the JNI call included).
 */
static void copy_memory(JNIEnv *env, jclass cls, jlong dst, jlong src, jint len)
{
	if (len > 0)
		memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, (size_t)len);
}

/* Address of a direct ByteBuffer (control path: once per buffer). */
static jlong buffer_address(JNIEnv *env, jclass cls, jobject buf)
{
	return buf ? (jlong)(uintptr_t)(*env)->GetDirectBufferAddress(env, buf) : 0;
}

static const JNINativeMethod methods[] = {
	{ "abiVersion", "()I", (void *)abi_version },
	{ "errnos", "()[I", (void *)errnos },
	{ "strerror", "(I)Ljava/lang/String;", (void *)str_error },
	{ "open", "(Ljava/lang/String;I)I", (void *)open_file },
	{ "openBeneath", "(Ljava/lang/String;Ljava/lang/String;I)I", (void *)open_beneath },
	{ "close", "(I)I", (void *)close_file },
	{ "fileType", "(I)I", (void *)file_type },
	{ "size", "(I)J", (void *)file_size },
	{ "allocatedBytes", "(I)J", (void *)allocated_bytes },
	{ "setSize", "(IJ)I", (void *)set_size },
	{ "pread", "(IJIJ)I", (void *)pread_full },
	{ "preadUpTo", "(IJIJ)I", (void *)pread_up_to },
	{ "pwrite", "(IJIJZ)I", (void *)pwrite_full },
	{ "fdatasync", "(I)I", (void *)fdatasync_file },
	{ "punchHole", "(IJJ)I", (void *)punch_hole },
	{ "zeroRange", "(IJJ)I", (void *)zero_range },
	{ "preallocate", "(IJJ)I", (void *)preallocate },
	{ "cloneFile", "(II)I", (void *)clone_file },
	{ "statFs", "(Ljava/lang/String;[J)I", (void *)stat_fs },
	{ "blkDiscard", "(IJJ)I", (void *)blk_discard },
	{ "blkZeroout", "(IJJ)I", (void *)blk_zeroout },
	{ "bufferAddress", "(Ljava/nio/ByteBuffer;)J", (void *)buffer_address },
	{ "mapAnonymous", "(JZ)J", (void *)map_anonymous },
	{ "unmap", "(JJ)I", (void *)unmap },
	{ "copy", "(JJI)V", (void *)copy_memory },
};

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	jclass cls = nvmf4j_jni_checked_class(env, "nvmf4j_bdev", NATIVE_CLASS, NVMF4J_BDEV_ABI_VERSION);
	if (!cls)
		return JNI_ERR; /* the exception is pending */
	if ((*env)->RegisterNatives(env, cls, methods, sizeof(methods) / sizeof(methods[0])) != JNI_OK)
		return JNI_ERR; /* NoSuchMethodError pending */
	if (nvmf4j_uring_register(env, cls) != JNI_OK)
		return JNI_ERR;
	return JNI_VERSION_1_8;
}
