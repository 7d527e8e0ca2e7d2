/*
 * nvmf4j_rbd: the rbd block device's binding of librados and librbd's C API (io.nvmf4j.bdev.RbdNative).
 *
 * Control path (connect, pool, create, open, size, resize, close) returns a handle or a negative errno.
 * Data path: rbd_aio_read / write / flush / discard / write_zeroes with a completion whose callback
 * argument is the Java side's 64-bit tag; librbd runs the callback on its own thread, which this library
 * attaches to the JVM once (as a daemon, detached when the thread ends) and which then calls the static
 * RbdNative.completed(tag, rc). Nothing is allocated on the Java heap per I/O; librbd allocates its
 * completion natively, released in the callback.
 *
 * Conventions (as in rdma-cm's nvmf4j_rdma): calls return a value or a negative errno and never throw;
 * JNI_OnLoad checks the ABI version against RbdNative.ABI_VERSION and registers the natives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jni.h>
#include <pthread.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "nvmf4j_jni.h"

/* Bumped whenever a native signature changes; must equal RbdNative.ABI_VERSION. */
#define NVMF4J_RBD_ABI_VERSION 1
#define NATIVE_CLASS "io/nvmf4j/bdev/RbdNative"

#define H2P(type, h) ((type)(uintptr_t)(h))
#define P2H(p) ((jlong)(uintptr_t)(p))

static JavaVM *jvm;
static jclass native_class;
static jmethodID completed_method;
static pthread_key_t attached_key;

static jint abi_version(JNIEnv *env, jclass cls)
{
	return NVMF4J_RBD_ABI_VERSION;
}

static jstring str_error(JNIEnv *env, jclass cls, jint err)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", strerror(err < 0 ? -err : err));
	return (*env)->NewStringUTF(env, buf);
}

/* librados's conf_set for one option; returns 0 or a negative errno */
static int set_option(rados_t cluster, const char *key, const char *value)
{
	return rados_conf_set(cluster, key, value);
}

/*
 * rados_create2 as clientName ("client.x"), the config file (NULL: Ceph's default search), the keyring,
 * the timeouts in seconds (a monitor or OSD that does not answer fails the call or the I/O with ETIMEDOUT
 * instead of hanging), partial discards that zero (reads after Deallocate return zeros), then rados_connect.
 * Returns the cluster handle or a negative errno.
 */
static jlong connect_cluster(JNIEnv *env, jclass cls, jstring conf, jstring client, jstring keyring, jint timeout)
{
	const char *c = conf ? (*env)->GetStringUTFChars(env, conf, NULL) : NULL;
	const char *n = (*env)->GetStringUTFChars(env, client, NULL);
	const char *k = keyring ? (*env)->GetStringUTFChars(env, keyring, NULL) : NULL;
	rados_t cluster = NULL;
	char secs[16];
	snprintf(secs, sizeof(secs), "%d", (int)timeout);
	int rc = n ? rados_create2(&cluster, "ceph", n, 0) : -ENOMEM;
	if (rc == 0)
		rc = rados_conf_read_file(cluster, c);
	if (rc == 0 && k)
		rc = set_option(cluster, "keyring", k);
	if (rc == 0)
		rc = set_option(cluster, "client_mount_timeout", secs);
	if (rc == 0)
		rc = set_option(cluster, "rados_osd_op_timeout", secs);
	if (rc == 0)
		rc = set_option(cluster, "rados_mon_op_timeout", secs);
	if (rc == 0)
		rc = set_option(cluster, "rbd_skip_partial_discard", "false");
	if (rc == 0)
		rc = set_option(cluster, "log_to_stderr", "false");
	if (rc == 0)
		rc = set_option(cluster, "err_to_stderr", "false");
	if (rc == 0)
		rc = rados_connect(cluster);
	if (c)
		(*env)->ReleaseStringUTFChars(env, conf, c);
	if (n)
		(*env)->ReleaseStringUTFChars(env, client, n);
	if (k)
		(*env)->ReleaseStringUTFChars(env, keyring, k);
	if (rc < 0) {
		if (cluster)
			rados_shutdown(cluster);
		return rc;
	}
	return P2H(cluster);
}

static void shutdown_cluster(JNIEnv *env, jclass cls, jlong cluster)
{
	rados_shutdown(H2P(rados_t, cluster));
}

/* An I/O context on the pool; -ENOENT when there is no such pool. */
static jlong open_pool(JNIEnv *env, jclass cls, jlong cluster, jstring pool)
{
	const char *p = (*env)->GetStringUTFChars(env, pool, NULL);
	if (!p)
		return -ENOMEM;
	rados_ioctx_t io = NULL;
	int rc = rados_ioctx_create(H2P(rados_t, cluster), p, &io);
	(*env)->ReleaseStringUTFChars(env, pool, p);
	return rc < 0 ? rc : P2H(io);
}

static void close_pool(JNIEnv *env, jclass cls, jlong io)
{
	rados_ioctx_destroy(H2P(rados_ioctx_t, io));
}

/* rbd_create with the pool's default format and features and 4 MiB objects (order 22); -EEXIST if it is there. */
static jint create_image(JNIEnv *env, jclass cls, jlong io, jstring image, jlong size)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	int order = 22;
	int rc = rbd_create(H2P(rados_ioctx_t, io), i, (uint64_t)size, &order);
	(*env)->ReleaseStringUTFChars(env, image, i);
	return rc;
}

/* rbd_open (read-write, the image's head); -ENOENT when there is no such image. */
static jlong open_image(JNIEnv *env, jclass cls, jlong io, jstring image)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	rbd_image_t img = NULL;
	int rc = rbd_open(H2P(rados_ioctx_t, io), i, &img, NULL);
	(*env)->ReleaseStringUTFChars(env, image, i);
	return rc < 0 ? rc : P2H(img);
}

static jint close_image(JNIEnv *env, jclass cls, jlong img)
{
	return rbd_close(H2P(rbd_image_t, img));
}

static jlong image_size(JNIEnv *env, jclass cls, jlong img)
{
	uint64_t size = 0;
	int rc = rbd_get_size(H2P(rbd_image_t, img), &size);
	return rc < 0 ? rc : (jlong)size;
}

static jint resize_image(JNIEnv *env, jclass cls, jlong img, jlong size)
{
	return rbd_resize(H2P(rbd_image_t, img), (uint64_t)size);
}

/* Synchronous rbd_flush (close: everything acknowledged is on the OSDs). */
static jint flush_image(JNIEnv *env, jclass cls, jlong img)
{
	return rbd_flush(H2P(rbd_image_t, img));
}

static void detach_thread(void *unused)
{
	(*jvm)->DetachCurrentThread(jvm);
}

/* The completion callback on a librbd thread: attach once, hand tag and result to RbdNative.completed. */
static void completed(rbd_completion_t c, void *arg)
{
	jlong tag = (jlong)(intptr_t)arg;
	jlong rc = (jlong)rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	JNIEnv *env;
	if ((*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_8) == JNI_EDETACHED) {
		JavaVMAttachArgs args = { JNI_VERSION_1_8, "rbd-completion", NULL };
		if ((*jvm)->AttachCurrentThreadAsDaemon(jvm, (void **)&env, &args) != JNI_OK) {
			fprintf(stderr, "nvmf4j_rbd: cannot attach a librbd thread to the JVM; I/O %lld is lost\n",
				(long long)tag);
			return;
		}
		pthread_setspecific(attached_key, env);
	}
	(*env)->CallStaticVoidMethod(env, native_class, completed_method, tag, rc);
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionDescribe(env);
		(*env)->ExceptionClear(env);
	}
}

/* A completion for tag, or a negative errno. */
static int new_completion(jlong tag, rbd_completion_t *c)
{
	return rbd_aio_create_completion((void *)(intptr_t)tag, completed, c);
}

/* Submits op; on a submission error the completion is released and the errno returned (no callback comes). */
#define SUBMIT(call)                                 \
	do {                                         \
		rbd_completion_t c;                  \
		int rc = new_completion(tag, &c);    \
		if (rc < 0)                          \
			return rc;                   \
		rc = (call);                         \
		if (rc < 0) {                        \
			rbd_aio_release(c);          \
			return rc;                   \
		}                                    \
		return 0;                            \
	} while (0)

static jint aio_read(JNIEnv *env, jclass cls, jlong img, jlong tag, jlong off, jint len, jlong addr)
{
	SUBMIT(rbd_aio_read(H2P(rbd_image_t, img), (uint64_t)off, (size_t)len, H2P(char *, addr), c));
}

static jint aio_write(JNIEnv *env, jclass cls, jlong img, jlong tag, jlong off, jint len, jlong addr)
{
	SUBMIT(rbd_aio_write(H2P(rbd_image_t, img), (uint64_t)off, (size_t)len, H2P(const char *, addr), c));
}

static jint aio_flush(JNIEnv *env, jclass cls, jlong img, jlong tag)
{
	SUBMIT(rbd_aio_flush(H2P(rbd_image_t, img), c));
}

static jint aio_discard(JNIEnv *env, jclass cls, jlong img, jlong tag, jlong off, jlong len)
{
	SUBMIT(rbd_aio_discard(H2P(rbd_image_t, img), (uint64_t)off, (uint64_t)len, c));
}

static jint aio_write_zeroes(JNIEnv *env, jclass cls, jlong img, jlong tag, jlong off, jlong len)
{
	SUBMIT(rbd_aio_write_zeroes(H2P(rbd_image_t, img), (uint64_t)off, (size_t)len, c, 0, 0));
}

static const JNINativeMethod methods[] = {
	{ "abiVersion", "()I", (void *)abi_version },
	{ "strerror", "(I)Ljava/lang/String;", (void *)str_error },
	{ "connect", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;I)J", (void *)connect_cluster },
	{ "shutdown", "(J)V", (void *)shutdown_cluster },
	{ "openPool", "(JLjava/lang/String;)J", (void *)open_pool },
	{ "closePool", "(J)V", (void *)close_pool },
	{ "create", "(JLjava/lang/String;J)I", (void *)create_image },
	{ "open", "(JLjava/lang/String;)J", (void *)open_image },
	{ "close", "(J)I", (void *)close_image },
	{ "size", "(J)J", (void *)image_size },
	{ "resize", "(JJ)I", (void *)resize_image },
	{ "flush", "(J)I", (void *)flush_image },
	{ "aioRead", "(JJJIJ)I", (void *)aio_read },
	{ "aioWrite", "(JJJIJ)I", (void *)aio_write },
	{ "aioFlush", "(JJ)I", (void *)aio_flush },
	{ "aioDiscard", "(JJJJ)I", (void *)aio_discard },
	{ "aioWriteZeroes", "(JJJJ)I", (void *)aio_write_zeroes },
};

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	jclass cls = nvmf4j_jni_checked_class(env, "nvmf4j_rbd", NATIVE_CLASS, NVMF4J_RBD_ABI_VERSION);
	if (!cls)
		return JNI_ERR; /* the exception is pending */
	if ((*env)->RegisterNatives(env, cls, methods, sizeof(methods) / sizeof(methods[0])) != JNI_OK)
		return JNI_ERR; /* NoSuchMethodError pending */
	completed_method = (*env)->GetStaticMethodID(env, cls, "completed", "(JJ)V");
	if (!completed_method)
		return JNI_ERR;
	native_class = (*env)->NewGlobalRef(env, cls);
	if (!native_class || pthread_key_create(&attached_key, detach_thread) != 0)
		return JNI_ERR;
	jvm = vm;
	return JNI_VERSION_1_8;
}
