/*
 * Hugepage arena: one anonymous mapping, MAP_HUGETLB when asked and possible,
 * normal pages otherwise; handed to Java as a direct ByteBuffer.
 */
#include <string.h>
#include <sys/mman.h>
#include "nvmf4j_rdma.h"

enum { INFO_ADDRESS, INFO_LENGTH, INFO_HUGE, INFO_HUGE_ERRNO, INFO_COUNT };

static size_t round_up(size_t n, size_t unit)
{
	return (n + unit - 1) / unit * unit;
}

/*
 * Maps `size` bytes (populated, so a hugepage shortage shows here and not as a
 * SIGBUS later). info receives address, mapped length, 1 when hugepages back
 * it, and the errno of a failed hugepage attempt. Returns null (info[0] =
 * -errno) when even normal pages fail.
 */
static jobject mmap_arena(JNIEnv *env, jclass cls, jlong size, jlong huge_page_size, jboolean huge,
			  jlongArray info)
{
	if (size <= 0 || !info || (*env)->GetArrayLength(env, info) < INFO_COUNT)
		return NULL;
	jlong out[INFO_COUNT] = { 0 };
	void *p = MAP_FAILED;
	size_t len = 0;
	if (huge && huge_page_size > 0) {
		len = round_up((size_t)size, (size_t)huge_page_size);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE,
			 -1, 0);
		if (p == MAP_FAILED)
			out[INFO_HUGE_ERRNO] = errno ? errno : ENOMEM;
		else
			out[INFO_HUGE] = 1;
	} else if (huge) {
		out[INFO_HUGE_ERRNO] = ENOSYS;
	}
	if (p == MAP_FAILED) {
		len = round_up((size_t)size, 4096);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	}
	if (p == MAP_FAILED) {
		out[INFO_ADDRESS] = NEG_ERRNO();
		(*env)->SetLongArrayRegion(env, info, 0, INFO_COUNT, out);
		return NULL;
	}
	out[INFO_ADDRESS] = P2H(p);
	out[INFO_LENGTH] = (jlong)len;
	jobject buf = (*env)->NewDirectByteBuffer(env, p, size);
	if (!buf) {
		munmap(p, len);
		return NULL;
	}
	(*env)->SetLongArrayRegion(env, info, 0, INFO_COUNT, out);
	return buf;
}

static jint munmap_arena(JNIEnv *env, jclass cls, jlong addr, jlong len)
{
	REQUIRE(addr && len > 0);
	return munmap(H2P(void, addr), (size_t)len) ? NEG_ERRNO() : 0;
}

const JNINativeMethod nvmf4j_arena_methods[] = {
	{ "mmapArena", "(JJZ[J)Ljava/nio/ByteBuffer;", (void *)mmap_arena },
	{ "munmapArena", "(JJ)I", (void *)munmap_arena },
};
const int nvmf4j_arena_method_count = sizeof(nvmf4j_arena_methods) / sizeof(nvmf4j_arena_methods[0]);
