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
 * Shared state of the image (the reservation both gateways of an image keep): a metadata key read with
 * rbd_metadata_get and changed by compare-and-swap (one librados write op on the image's header object:
 * omap_cmp of the key's value as read, then omap_set; another writer in between fails it with -ECANCELED),
 * a watch of the header object whose callback calls RbdNative.headerUpdated, which acknowledges at once or later
 * (notify_ack: after the gateway drained), and a notify with an empty payload (librbd takes it as a header update
 * too) that returns once every watcher has acknowledged or the timeout has passed, with the watchers that did not;
 * the watchers of the header with their addresses (a gateway serving the image watches it, and librbd does in every
 * client that has the image open), and the blocklisting of one of them. The image's exclusive lock:
 * rbd_lock_acquire / rbd_lock_release and rbd_lock_break of the current owners (which blocklists them).
 *
 * Pools of volumes (io.nvmf4j.bdev.RbdPool): images removed, moved to RBD's trash and restored from it, listed
 * (with the trash); snapshots made without librbd's quiesce notification (the target holds the writes itself)
 * and removed; clones of a snapshot in clone format 2 (no protection of the parent snapshot needed); the bytes of
 * an image or snapshot's objects that exist (rbd_diff_iterate2 with whole objects, no parent); a monitor
 * command (the pool's figures of "df"); thick provisioning (zeros written over a range with rbd_aio_writesame, as
 * `rbd create --thick-provision` does, by a client whose rbd_discard_on_zeroed_write_same is off); and the RADOS
 * pool's RBD metadata set, removed and listed (the trash moves the pool records).
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nvmf4j_jni.h"

/* Bumped whenever a native signature changes; must equal RbdNative.ABI_VERSION. */
#define NVMF4J_RBD_ABI_VERSION 8
#define NATIVE_CLASS "io/nvmf4j/bdev/RbdNative"

#define H2P(type, h) ((type)(uintptr_t)(h))
#define P2H(p) ((jlong)(uintptr_t)(p))

static JavaVM *jvm;
static jclass native_class;
static jmethodID completed_method;
static jmethodID header_updated_method;
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
 * the timeouts in seconds (a monitor that does not answer fails the call, an OSD that does not answer fails
 * the I/O, with ETIMEDOUT instead of hanging; the OSD one is separate so that it can sit above Ceph's own
 * failure detection), librbd's cache on or off (off: every acknowledged write is on the OSDs and reads see
 * what any client wrote), partial discards that zero (reads after Deallocate return zeros), the zeros of a writesame
 * written, not discarded (thick provisioning, thick_provision; as `rbd create --thick-provision` sets it: librbd reads
 * it from the client only, and the data path sends no writesame: Write Zeroes and Deallocate are rbd_aio_write_zeroes
 * and rbd_aio_discard, which it does not touch), then rados_connect.
 * Returns the cluster handle or a negative errno.
 */
static jlong connect_cluster(JNIEnv *env, jclass cls, jstring conf, jstring client, jstring keyring, jint timeout,
			     jint osd_timeout, jboolean cache)
{
	const char *c = conf ? (*env)->GetStringUTFChars(env, conf, NULL) : NULL;
	const char *n = (*env)->GetStringUTFChars(env, client, NULL);
	const char *k = keyring ? (*env)->GetStringUTFChars(env, keyring, NULL) : NULL;
	rados_t cluster = NULL;
	char secs[16];
	char osd_secs[16];
	snprintf(secs, sizeof(secs), "%d", (int)timeout);
	snprintf(osd_secs, sizeof(osd_secs), "%d", (int)osd_timeout);
	int rc = n ? rados_create2(&cluster, "ceph", n, 0) : -ENOMEM;
	if (rc == 0)
		rc = rados_conf_read_file(cluster, c);
	if (rc == 0 && k)
		rc = set_option(cluster, "keyring", k);
	if (rc == 0)
		rc = set_option(cluster, "client_mount_timeout", secs);
	if (rc == 0)
		rc = set_option(cluster, "rados_osd_op_timeout", osd_secs);
	if (rc == 0)
		rc = set_option(cluster, "rados_mon_op_timeout", secs);
	if (rc == 0)
		rc = set_option(cluster, "rbd_cache", cache ? "true" : "false");
	if (rc == 0)
		rc = set_option(cluster, "rbd_skip_partial_discard", "false");
	if (rc == 0)
		rc = set_option(cluster, "rbd_discard_on_zeroed_write_same", "false");
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

/*
 * Sends this I/O context's writes to the OSDs while the pool or the cluster is full (CEPH_OSD_FLAG_FULL_TRY), where
 * the Objecter would hold them until the flag clears: the OSD then fails a write that would add bytes or objects with
 * -EDQUOT (the pool's quota) or -ENOSPC (the cluster's full ratio) at once. librbd copies the flag into the contexts
 * of an image opened on this one.
 */
static void pool_full_try(JNIEnv *env, jclass cls, jlong io)
{
	rados_set_pool_full_try(H2P(rados_ioctx_t, io));
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

/* Attaches the calling librbd / librados thread to the JVM (once, as a daemon); NULL when that fails. */
static JNIEnv *attached_env(const char *name)
{
	JNIEnv *env;
	if ((*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_8) == JNI_EDETACHED) {
		JavaVMAttachArgs args = { JNI_VERSION_1_8, (char *)name, NULL };
		if ((*jvm)->AttachCurrentThreadAsDaemon(jvm, (void **)&env, &args) != JNI_OK)
			return NULL;
		pthread_setspecific(attached_key, env);
	}
	return env;
}

/* The completion callback on a librbd thread: attach once, hand tag and result to RbdNative.completed. */
static void completed(rbd_completion_t c, void *arg)
{
	jlong tag = (jlong)(intptr_t)arg;
	jlong rc = (jlong)rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	JNIEnv *env = attached_env("rbd-completion");
	if (!env) {
		fprintf(stderr, "nvmf4j_rbd: cannot attach a librbd thread to the JVM; I/O %lld is lost\n",
			(long long)tag);
		return;
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

/* "rbd_header.<id>" (the header object of a format 2 image) into out; its length or a negative errno. */
static jint header_oid(JNIEnv *env, jclass cls, jlong img, jbyteArray out)
{
	char id[96];
	int rc = rbd_get_id(H2P(rbd_image_t, img), id, sizeof(id));
	if (rc < 0)
		return rc;
	char oid[128];
	int n = snprintf(oid, sizeof(oid), "rbd_header.%s", id);
	if (n >= (int)sizeof(oid) || n > (*env)->GetArrayLength(env, out))
		return -ERANGE;
	(*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte *)oid);
	return n;
}

/*
 * The value of metadata key (omap key "metadata_<key>" of the header object oid, as rbd_metadata_get reads it)
 * into out: its length, -ENOENT when absent, -ERANGE when out is too small. Plain librados, not librbd: it runs
 * in the header watch's callback, where a librbd call would wait for librbd's own handling of the same
 * notification (queued behind this callback) and never return.
 */
static jint metadata_get(JNIEnv *env, jclass cls, jlong io, jstring oid, jstring key, jbyteArray out)
{
	const char *o = (*env)->GetStringUTFChars(env, oid, NULL);
	const char *k = (*env)->GetStringUTFChars(env, key, NULL);
	char omap_key[256];
	int rc = o && k ? 0 : -ENOMEM;
	if (rc == 0 && snprintf(omap_key, sizeof(omap_key), "metadata_%s", k) >= (int)sizeof(omap_key))
		rc = -ENAMETOOLONG;
	if (rc == 0) {
		rados_read_op_t op = rados_create_read_op();
		rados_omap_iter_t iter = NULL;
		int prval = 0;
		const char *keys[] = { omap_key };
		rados_read_op_omap_get_vals_by_keys(op, keys, 1, &iter, &prval);
		rc = rados_read_op_operate(op, H2P(rados_ioctx_t, io), o, 0);
		if (rc == 0)
			rc = prval;
		if (rc == 0) {
			char *ik = NULL, *iv = NULL;
			size_t ilen = 0;
			rc = rados_omap_get_next(iter, &ik, &iv, &ilen);
			if (rc == 0 && !ik)
				rc = -ENOENT;
			else if (rc == 0 && ilen > (size_t)(*env)->GetArrayLength(env, out))
				rc = -ERANGE;
			else if (rc == 0) {
				(*env)->SetByteArrayRegion(env, out, 0, (jsize)ilen, (const jbyte *)iv);
				rc = (int)ilen;
			}
		}
		if (iter)
			rados_omap_get_end(iter);
		rados_release_read_op(op);
	}
	if (o)
		(*env)->ReleaseStringUTFChars(env, oid, o);
	if (k)
		(*env)->ReleaseStringUTFChars(env, key, k);
	return rc;
}

/*
 * Sets metadata key (omap key "metadata_<key>" of the header object oid) to value if its value is still
 * expected (null: the key is absent; the OSD compares an absent key as empty). 0, -ECANCELED when another
 * writer changed it meanwhile, or another negative errno.
 */
static jint metadata_cas(JNIEnv *env, jclass cls, jlong io, jstring oid, jstring key, jbyteArray expected,
			 jbyteArray value)
{
	const char *o = (*env)->GetStringUTFChars(env, oid, NULL);
	const char *k = (*env)->GetStringUTFChars(env, key, NULL);
	jsize elen = expected ? (*env)->GetArrayLength(env, expected) : 0;
	jsize vlen = (*env)->GetArrayLength(env, value);
	char *ebuf = malloc((size_t)elen + 1);
	char *vbuf = malloc((size_t)vlen + 1);
	char omap_key[256];
	int rc = o && k && ebuf && vbuf ? 0 : -ENOMEM;
	if (rc == 0 && snprintf(omap_key, sizeof(omap_key), "metadata_%s", k) >= (int)sizeof(omap_key))
		rc = -ENAMETOOLONG;
	if (rc == 0) {
		if (expected)
			(*env)->GetByteArrayRegion(env, expected, 0, elen, (jbyte *)ebuf);
		(*env)->GetByteArrayRegion(env, value, 0, vlen, (jbyte *)vbuf);
		rados_write_op_t op = rados_create_write_op();
		int prval = 0;
		const char *keys[] = { omap_key };
		const char *vals[] = { vbuf };
		size_t lens[] = { (size_t)vlen };
		rados_write_op_omap_cmp(op, omap_key, LIBRADOS_CMPXATTR_OP_EQ, ebuf, (size_t)elen, &prval);
		rados_write_op_omap_set(op, keys, vals, lens, 1);
		rc = rados_write_op_operate(op, H2P(rados_ioctx_t, io), o, NULL, 0);
		rados_release_write_op(op);
	}
	if (o)
		(*env)->ReleaseStringUTFChars(env, oid, o);
	if (k)
		(*env)->ReleaseStringUTFChars(env, key, k);
	free(ebuf);
	free(vbuf);
	return rc;
}

/* A watch of one object: what its callback needs to acknowledge and to tell Java. */
struct watch {
	rados_ioctx_t io;
	char oid[128];
	jlong tag;
	uint64_t cookie;
};

/* Tells Java (err 0: notification notify_id; err < 0: the watch broke); JNI_TRUE: acknowledge now. */
static jboolean call_header_updated(struct watch *w, jint err, uint64_t notify_id)
{
	JNIEnv *env = attached_env("rbd-watch");
	if (!env) {
		fprintf(stderr, "nvmf4j_rbd: cannot attach a librados thread to the JVM\n");
		return JNI_TRUE;
	}
	jboolean now = (*env)->CallStaticBooleanMethod(env, native_class, header_updated_method, w->tag, err,
						       P2H(w), (jlong)notify_id);
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionDescribe(env);
		(*env)->ExceptionClear(env);
		return JNI_TRUE;
	}
	return now;
}

/*
 * A notification on the header object: Java re-reads what it keeps there and either has it acknowledged here or
 * acknowledges it later itself (notify_ack, once it drained the commands the change fences). Our own client's
 * notifications are acknowledged at once (this process changed the state and knows it already).
 */
static void watch_notified(void *arg, uint64_t notify_id, uint64_t handle, uint64_t notifier_id, void *data,
			   size_t len)
{
	struct watch *w = arg;
	if (notifier_id == rados_get_instance_id(rados_ioctx_get_cluster(w->io))
	    || call_header_updated(w, 0, notify_id))
		rados_notify_ack(w->io, w->oid, notify_id, handle, NULL, 0);
}

/* The watch broke (the connection to the OSD was lost): Java re-reads and watches again. */
static void watch_failed(void *arg, uint64_t cookie, int err)
{
	call_header_updated(arg, err < 0 ? err : -err, 0);
}

/* Acknowledges notification notify_id on the watch handle (one Java deferred): 0 or a negative errno. */
static jint notify_ack(JNIEnv *env, jclass cls, jlong handle, jlong notify_id)
{
	struct watch *w = H2P(struct watch *, handle);
	return rados_notify_ack(w->io, w->oid, (uint64_t)notify_id, w->cookie, NULL, 0);
}

/* rados_watch2 of oid; the watch's handle, or a negative errno. */
static jlong watch_object(JNIEnv *env, jclass cls, jlong io, jstring oid, jlong tag)
{
	const char *o = (*env)->GetStringUTFChars(env, oid, NULL);
	if (!o)
		return -ENOMEM;
	struct watch *w = calloc(1, sizeof(*w));
	int rc = w ? 0 : -ENOMEM;
	if (rc == 0 && snprintf(w->oid, sizeof(w->oid), "%s", o) >= (int)sizeof(w->oid))
		rc = -ENAMETOOLONG;
	(*env)->ReleaseStringUTFChars(env, oid, o);
	if (rc == 0) {
		w->io = H2P(rados_ioctx_t, io);
		w->tag = tag;
		rc = rados_watch2(w->io, w->oid, &w->cookie, watch_notified, watch_failed, w);
	}
	if (rc < 0) {
		free(w);
		return rc;
	}
	return P2H(w);
}

/* Ends a watch (waiting for callbacks under way) and frees it. */
static jint unwatch_object(JNIEnv *env, jclass cls, jlong handle)
{
	struct watch *w = H2P(struct watch *, handle);
	int rc = rados_unwatch2(w->io, w->cookie);
	rados_watch_flush(rados_ioctx_get_cluster(w->io));
	free(w);
	return rc;
}

/*
 * An empty notification on oid, waiting up to timeout_ms for every watcher's ack. Returns how many watches did not
 * acknowledge in time (0: all did) and writes their (client id, cookie) pairs into timed_out as far as it holds
 * them; or a negative errno when the notification itself failed.
 */
static jint notify_object(JNIEnv *env, jclass cls, jlong io, jstring oid, jint timeout_ms, jlongArray timed_out)
{
	const char *o = (*env)->GetStringUTFChars(env, oid, NULL);
	if (!o)
		return -ENOMEM;
	char *reply = NULL;
	size_t reply_len = 0;
	int rc = rados_notify2(H2P(rados_ioctx_t, io), o, "", 0, (uint64_t)timeout_ms, &reply, &reply_len);
	(*env)->ReleaseStringUTFChars(env, oid, o);
	if (rc < 0 && rc != -ETIMEDOUT) {
		if (reply)
			rados_buffer_free(reply);
		return rc;
	}
	if (!reply)
		return rc == -ETIMEDOUT ? -ETIMEDOUT : 0; /* timed out, but which watchers is not known */
	struct notify_ack_t *acks = NULL;
	struct notify_timeout_t *timeouts = NULL;
	size_t nr_acks = 0, nr_timeouts = 0;
	int drc = rados_decode_notify_response(reply, reply_len, &acks, &nr_acks, &timeouts, &nr_timeouts);
	rados_buffer_free(reply);
	if (drc < 0)
		return rc == -ETIMEDOUT ? -ETIMEDOUT : drc;
	jsize cap = (*env)->GetArrayLength(env, timed_out) / 2;
	for (size_t i = 0; i < nr_timeouts && i < (size_t)cap; i++) {
		jlong pair[2] = { (jlong)timeouts[i].notifier_id, (jlong)timeouts[i].cookie };
		(*env)->SetLongArrayRegion(env, timed_out, (jsize)(2 * i), 2, pair);
	}
	rados_free_notify_response(acks, nr_acks, timeouts);
	if (rc == -ETIMEDOUT && nr_timeouts == 0)
		return -ETIMEDOUT;
	return (jint)nr_timeouts;
}

/*
 * The watchers of the image's header (rbd_watchers_list): their client ids into ids and addresses into addrs, as
 * many as they hold; returns how many there are, or a negative errno.
 */
static jint list_watchers(JNIEnv *env, jclass cls, jlong img, jlongArray ids, jobjectArray addrs)
{
	rbd_image_watcher_t watchers[64];
	size_t n = sizeof(watchers) / sizeof(watchers[0]);
	int rc = rbd_watchers_list(H2P(rbd_image_t, img), watchers, &n);
	if (rc == -ERANGE)
		return -ERANGE;
	if (rc < 0)
		return rc;
	jsize cap = (*env)->GetArrayLength(env, ids);
	for (size_t i = 0; i < n && i < (size_t)cap; i++) {
		jlong id = (jlong)watchers[i].id;
		(*env)->SetLongArrayRegion(env, ids, (jsize)i, 1, &id);
		jstring a = (*env)->NewStringUTF(env, watchers[i].addr ? watchers[i].addr : "");
		if (!a)
			break; /* OutOfMemoryError pending */
		(*env)->SetObjectArrayElement(env, addrs, (jsize)i, a);
		(*env)->DeleteLocalRef(env, a);
	}
	rbd_watchers_list_cleanup(watchers, n);
	return (jint)n;
}

/* This client's id (client.<id>), as watchers and notify replies name it. */
static jlong instance_id(JNIEnv *env, jclass cls, jlong cluster)
{
	return (jlong)rados_get_instance_id(H2P(rados_t, cluster));
}

/*
 * Blocklists the client at addr (the OSDs refuse its operations from the map that lists it on, including those it
 * sent before), for Ceph's default time, then waits until this client has the OSD map that lists it, so that every
 * operation this client sends afterwards is ordered after the blocklist (as librbd does when it breaks a lock).
 */
static jint blocklist_add(JNIEnv *env, jclass cls, jlong cluster, jstring addr)
{
	const char *a = (*env)->GetStringUTFChars(env, addr, NULL);
	if (!a)
		return -ENOMEM;
	char *copy = strdup(a);
	(*env)->ReleaseStringUTFChars(env, addr, a);
	if (!copy)
		return -ENOMEM;
	int rc = rados_blocklist_add(H2P(rados_t, cluster), copy, 0);
	free(copy);
	if (rc == 0)
		rc = rados_wait_for_latest_osdmap(H2P(rados_t, cluster));
	return rc;
}

/* Watches of the image's header held by other clients than this one: a count, or a negative errno. */
static jint other_watchers(JNIEnv *env, jclass cls, jlong cluster, jlong img)
{
	rbd_image_watcher_t watchers[64];
	size_t n = sizeof(watchers) / sizeof(watchers[0]);
	int rc = rbd_watchers_list(H2P(rbd_image_t, img), watchers, &n);
	if (rc == -ERANGE)
		return (jint)n; /* more than fit: some are other clients' */
	if (rc < 0)
		return rc;
	uint64_t me = rados_get_instance_id(H2P(rados_t, cluster));
	jint others = 0;
	for (size_t i = 0; i < n; i++)
		if ((uint64_t)watchers[i].id != me)
			others++;
	rbd_watchers_list_cleanup(watchers, n);
	return others;
}

/* rbd_lock_acquire(EXCLUSIVE): 0, -EROFS when a peer holds it explicitly, or another negative errno. */
static jint lock_acquire(JNIEnv *env, jclass cls, jlong img)
{
	return rbd_lock_acquire(H2P(rbd_image_t, img), RBD_LOCK_MODE_EXCLUSIVE);
}

static jint lock_release(JNIEnv *env, jclass cls, jlong img)
{
	return rbd_lock_release(H2P(rbd_image_t, img));
}

/* 1 when this client owns the exclusive lock, 0 when not, or a negative errno. */
static jint lock_owned(JNIEnv *env, jclass cls, jlong img)
{
	int owner = 0;
	int rc = rbd_is_exclusive_lock_owner(H2P(rbd_image_t, img), &owner);
	return rc < 0 ? rc : owner != 0;
}

/*
 * The owners of the image's exclusive lock when they are other clients: 1 with their names in owners (n of them;
 * free with rbd_lock_get_owners_cleanup), 0 when this client or nobody owns it, or a negative errno.
 */
static int other_owners(rbd_image_t image, rbd_lock_mode_t *mode, char **owners, size_t *n)
{
	int owner = 0;
	int rc = rbd_is_exclusive_lock_owner(image, &owner);
	if (rc < 0 || owner)
		return rc;
	rc = rbd_lock_get_owners(image, mode, owners, n);
	if (rc == -ENOENT || (rc >= 0 && *n == 0))
		return 0;
	return rc < 0 ? rc : 1;
}

/*
 * The owner of the image's exclusive lock when it is another client: 1 with its name (rbd_lock_get_owners' form)
 * in out[0], 0 when nobody or this client owns it, or a negative errno.
 */
static jint lock_other_owner(JNIEnv *env, jclass cls, jlong img, jobjectArray out)
{
	rbd_lock_mode_t mode;
	char *owners[8];
	size_t n = 8;
	int rc = other_owners(H2P(rbd_image_t, img), &mode, owners, &n);
	if (rc <= 0)
		return rc;
	jstring name = (*env)->NewStringUTF(env, owners[0]);
	rbd_lock_get_owners_cleanup(owners, n);
	if (!name)
		return -ENOMEM;
	(*env)->SetObjectArrayElement(env, out, 0, name);
	return 1;
}

/* The image's features (rbd_get_features: RBD_FEATURE_* bits), or a negative errno. */
static jlong image_features(JNIEnv *env, jclass cls, jlong img)
{
	uint64_t features = 0;
	int rc = rbd_get_features(H2P(rbd_image_t, img), &features);
	return rc < 0 ? (jlong)rc : (jlong)features;
}

/* Breaks the exclusive lock of every other owner (librbd blocklists them): how many, or a negative errno. */
static jint lock_break_others(JNIEnv *env, jclass cls, jlong img)
{
	rbd_image_t image = H2P(rbd_image_t, img);
	rbd_lock_mode_t mode;
	char *owners[8];
	size_t n = 8;
	int rc = other_owners(image, &mode, owners, &n);
	if (rc <= 0)
		return rc;
	int broken = 0;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		rc = rbd_lock_break(image, mode, owners[i]);
		if (rc == 0)
			broken++;
		else if (rc == -ENOENT)
			rc = 0;
	}
	rbd_lock_get_owners_cleanup(owners, n);
	return rc < 0 ? rc : broken;
}

/* ------------------------------------------------------------------ pools of volumes */

static jint remove_image(JNIEnv *env, jclass cls, jlong io, jstring image)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	int rc = rbd_remove(H2P(rados_ioctx_t, io), i);
	(*env)->ReleaseStringUTFChars(env, image, i);
	return rc;
}

static int no_progress(uint64_t offset, uint64_t total, void *arg)
{
	return 0;
}

/* rbd_snap_create2 without librbd's quiesce notification: the caller held and drained the writes itself. */
static jint snap_create(JNIEnv *env, jclass cls, jlong img, jstring snap)
{
	const char *s = (*env)->GetStringUTFChars(env, snap, NULL);
	if (!s)
		return -ENOMEM;
	int rc = rbd_snap_create2(H2P(rbd_image_t, img), s, RBD_SNAP_CREATE_SKIP_QUIESCE, no_progress, NULL);
	(*env)->ReleaseStringUTFChars(env, snap, s);
	return rc;
}

static jint snap_remove(JNIEnv *env, jclass cls, jlong img, jstring snap)
{
	const char *s = (*env)->GetStringUTFChars(env, snap, NULL);
	if (!s)
		return -ENOMEM;
	int rc = rbd_snap_remove(H2P(rbd_image_t, img), s);
	(*env)->ReleaseStringUTFChars(env, snap, s);
	return rc;
}

/* rbd_clone3 of parent@snap into child in the same pool, clone format 2 (the parent snapshot needs no protect). */
static jint clone_image(JNIEnv *env, jclass cls, jlong io, jstring parent, jstring snap, jstring child)
{
	const char *p = (*env)->GetStringUTFChars(env, parent, NULL);
	const char *s = (*env)->GetStringUTFChars(env, snap, NULL);
	const char *c = (*env)->GetStringUTFChars(env, child, NULL);
	int rc = -ENOMEM;
	if (p && s && c) {
		rbd_image_options_t opts;
		rbd_image_options_create(&opts);
		rc = rbd_image_options_set_uint64(opts, RBD_IMAGE_OPTION_CLONE_FORMAT, 2);
		if (rc == 0)
			rc = rbd_clone3(H2P(rados_ioctx_t, io), p, s, H2P(rados_ioctx_t, io), c, opts);
		rbd_image_options_destroy(opts);
	}
	if (p)
		(*env)->ReleaseStringUTFChars(env, parent, p);
	if (s)
		(*env)->ReleaseStringUTFChars(env, snap, s);
	if (c)
		(*env)->ReleaseStringUTFChars(env, child, c);
	return rc;
}

/* Copies C string src into out (as many bytes as fit): its length. */
static jint copy_out(JNIEnv *env, const char *src, jbyteArray out)
{
	jsize n = (jsize)strlen(src);
	jsize cap = (*env)->GetArrayLength(env, out);
	(*env)->SetByteArrayRegion(env, out, 0, n < cap ? n : cap, (const jbyte *)src);
	return n;
}

/* The image's id into id_out: the id's length, or a negative errno (-ENOENT: no such image). */
static jint image_id(JNIEnv *env, jclass cls, jlong io, jstring image, jbyteArray id_out)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	rbd_image_t img = NULL;
	char id[128];
	int rc = rbd_open_read_only(H2P(rados_ioctx_t, io), i, &img, NULL);
	if (rc == 0) {
		rc = rbd_get_id(img, id, sizeof(id));
		rbd_close(img);
	}
	(*env)->ReleaseStringUTFChars(env, image, i);
	return rc < 0 ? rc : copy_out(env, id, id_out);
}

/* rbd_trash_move (no deferment): 0 or a negative errno. */
static jint trash_move(JNIEnv *env, jclass cls, jlong io, jstring image)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	int rc = rbd_trash_move(H2P(rados_ioctx_t, io), i, 0);
	(*env)->ReleaseStringUTFChars(env, image, i);
	return rc;
}

static jint trash_restore(JNIEnv *env, jclass cls, jlong io, jstring id, jstring image)
{
	const char *d = (*env)->GetStringUTFChars(env, id, NULL);
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	int rc = d && i ? rbd_trash_restore(H2P(rados_ioctx_t, io), d, i) : -ENOMEM;
	if (d)
		(*env)->ReleaseStringUTFChars(env, id, d);
	if (i)
		(*env)->ReleaseStringUTFChars(env, image, i);
	return rc;
}

static jint trash_remove(JNIEnv *env, jclass cls, jlong io, jstring id)
{
	const char *d = (*env)->GetStringUTFChars(env, id, NULL);
	if (!d)
		return -ENOMEM;
	int rc = rbd_trash_remove(H2P(rados_ioctx_t, io), d, false);
	(*env)->ReleaseStringUTFChars(env, id, d);
	return rc;
}

/* Sets element k of a String[] (ignored past its end). */
static void set_string(JNIEnv *env, jobjectArray a, size_t k, const char *v)
{
	if (a && k < (size_t)(*env)->GetArrayLength(env, a)) {
		jstring s = (*env)->NewStringUTF(env, v);
		(*env)->SetObjectArrayElement(env, a, (jsize)k, s);
		(*env)->DeleteLocalRef(env, s);
	}
}

/* The pool's images (rbd_list2) into names, as many as it holds: how many there are, or a negative errno. */
static jint list_images(JNIEnv *env, jclass cls, jlong io, jobjectArray names)
{
	size_t max = (size_t)(*env)->GetArrayLength(env, names);
	rbd_image_spec_t *specs = calloc(max ? max : 1, sizeof(*specs));
	if (!specs)
		return -ENOMEM;
	size_t n = max;
	int rc = rbd_list2(H2P(rados_ioctx_t, io), specs, &n);
	if (rc == -ERANGE) {
		free(specs);
		return (jint)n;
	}
	if (rc >= 0) {
		for (size_t k = 0; k < n; k++)
			set_string(env, names, k, specs[k].name);
		rbd_image_spec_list_cleanup(specs, n);
	}
	free(specs);
	return rc < 0 ? rc : (jint)n;
}

/* The pool's trash (rbd_trash_list): ids and names, as many as the arrays hold; how many, or a negative errno. */
static jint list_trash(JNIEnv *env, jclass cls, jlong io, jobjectArray ids, jobjectArray names)
{
	size_t max = (size_t)(*env)->GetArrayLength(env, ids);
	rbd_trash_image_info_t *entries = calloc(max ? max : 1, sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	size_t n = max;
	int rc = rbd_trash_list(H2P(rados_ioctx_t, io), entries, &n);
	if (rc == -ERANGE) {
		free(entries);
		return (jint)n;
	}
	if (rc >= 0) {
		for (size_t k = 0; k < n; k++) {
			set_string(env, ids, k, entries[k].id);
			set_string(env, names, k, entries[k].name);
		}
		rbd_trash_list_cleanup(entries, n);
	}
	free(entries);
	return rc < 0 ? rc : (jint)n;
}

/* The image's user snapshots (rbd_snap_list) into names: how many there are, or a negative errno. */
static jint list_snaps(JNIEnv *env, jclass cls, jlong io, jstring image, jobjectArray names)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	if (!i)
		return -ENOMEM;
	rbd_image_t img = NULL;
	int rc = rbd_open_read_only(H2P(rados_ioctx_t, io), i, &img, NULL);
	(*env)->ReleaseStringUTFChars(env, image, i);
	if (rc < 0)
		return rc;
	int max = 16;
	rbd_snap_info_t *snaps = NULL;
	for (;;) {
		snaps = calloc((size_t)max, sizeof(*snaps));
		if (!snaps) {
			rc = -ENOMEM;
			break;
		}
		rc = rbd_snap_list(img, snaps, &max);
		if (rc != -ERANGE)
			break;
		free(snaps);
		snaps = NULL;
	}
	if (rc >= 0) {
		for (int k = 0; k < rc; k++)
			set_string(env, names, (size_t)k, snaps[k].name);
		rbd_snap_list_end(snaps);
	}
	free(snaps);
	rbd_close(img);
	return rc;
}

static int add_extent(uint64_t offset, size_t len, int exists, void *arg)
{
	if (exists)
		*(uint64_t *)arg += len;
	return 0;
}

/*
 * Bytes of the objects image (at snapshot snap, when not NULL) has written itself: rbd_diff_iterate2 from its
 * creation, whole objects, without the parent's (a fresh clone has none). A negative errno on failure.
 */
static int64_t image_allocated(rbd_image_t img)
{
	uint64_t size = 0, sum = 0;
	int rc = rbd_get_size(img, &size);
	if (rc == 0)
		rc = rbd_diff_iterate2(img, NULL, 0, size, 0, 1, add_extent, &sum);
	return rc < 0 ? rc : (int64_t)sum;
}

static jlong allocated_bytes(JNIEnv *env, jclass cls, jlong io, jstring image, jstring snap)
{
	const char *i = (*env)->GetStringUTFChars(env, image, NULL);
	const char *s = snap ? (*env)->GetStringUTFChars(env, snap, NULL) : NULL;
	rbd_image_t img = NULL;
	int64_t rc = i ? rbd_open_read_only(H2P(rados_ioctx_t, io), i, &img, s) : -ENOMEM;
	if (rc == 0) {
		rc = image_allocated(img);
		rbd_close(img);
	}
	if (i)
		(*env)->ReleaseStringUTFChars(env, image, i);
	if (s)
		(*env)->ReleaseStringUTFChars(env, snap, s);
	return (jlong)rc;
}

/* The same figure for an image open on the caller's handle (an rbd bdev's, at its head). */
static jlong image_allocated_bytes(JNIEnv *env, jclass cls, jlong image)
{
	return (jlong)image_allocated(H2P(rbd_image_t, image));
}

/* What one writesame of thick provisioning writes: 512 zero bytes, repeated by the OSD over the range. */
static const char zero_block[512];

/*
 * 0 when the client's rbd_discard_on_zeroed_write_same is false (connect_cluster sets it so: librbd writes the zeros
 * of a writesame instead of discarding them), -ENOTSUP when not, or a negative errno. librbd takes it from the client
 * only (it is no pool or image option).
 */
static int keeps_written_zeros(rados_t cluster)
{
	char value[16];
	int rc = rados_conf_get(cluster, "rbd_discard_on_zeroed_write_same", value, sizeof(value));
	return rc < 0 ? rc : strcmp(value, "false") == 0 ? 0 : -ENOTSUP;
}

/* Waits for one writesame and releases it: 0 or its negative errno. */
static int reap(rbd_completion_t c)
{
	rbd_aio_wait_for_complete(c);
	ssize_t r = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	return r < 0 ? (int)r : 0;
}

/*
 * Thick provisioning of [off, off + len) of an open image, as `rbd create --thick-provision` does it: zeros written
 * with rbd_aio_writesame (one 512-byte block, repeated) one object at a time (a stripe unit when that is smaller),
 * THICK_IN_FLIGHT at once (librbd's default rbd_concurrent_management_ops, which the rbd tool uses), then rbd_flush.
 * The image's client (cluster) must keep written zeros (keeps_written_zeros: otherwise librbd turns a zeroed
 * writesame into a discard and nothing is allocated): -ENOTSUP when it does not.
 * off and len are multiples of 512. 0 once every byte is written and flushed, else the first negative errno (the
 * writes already sent are waited for).
 */
#define THICK_IN_FLIGHT 10
static jint thick_provision(JNIEnv *env, jclass cls, jlong cluster, jlong img, jlong off, jlong len)
{
	rbd_image_t image = H2P(rbd_image_t, img);
	if (off < 0 || len < 0 || off % sizeof(zero_block) || len % sizeof(zero_block))
		return -EINVAL;
	int rc = keeps_written_zeros(H2P(rados_t, cluster));
	rbd_image_info_t info;
	uint64_t unit = 0;
	if (rc == 0)
		rc = rbd_stat(image, &info, sizeof(info));
	if (rc == 0)
		rc = rbd_get_stripe_unit(image, &unit);
	if (rc < 0)
		return rc;
	uint64_t chunk = unit && unit < info.obj_size ? unit : info.obj_size;
	rbd_completion_t ring[THICK_IN_FLIGHT];
	size_t issued = 0, reaped = 0;
	uint64_t pos = (uint64_t)off, end = (uint64_t)off + (uint64_t)len;
	while (rc == 0 && pos < end) {
		if (issued - reaped == THICK_IN_FLIGHT)
			rc = reap(ring[reaped++ % THICK_IN_FLIGHT]);
		rbd_completion_t c;
		if (rc == 0)
			rc = rbd_aio_create_completion(NULL, NULL, &c);
		if (rc < 0)
			break;
		uint64_t n = chunk - pos % chunk;
		if (n > end - pos)
			n = end - pos;
		rc = rbd_aio_writesame(image, pos, (size_t)n, zero_block, sizeof(zero_block), c,
				       LIBRADOS_OP_FLAG_FADVISE_SEQUENTIAL);
		if (rc < 0) {
			rbd_aio_release(c);
			break;
		}
		ring[issued++ % THICK_IN_FLIGHT] = c;
		pos += n;
	}
	while (reaped < issued) {
		int r = reap(ring[reaped++ % THICK_IN_FLIGHT]);
		if (rc == 0)
			rc = r;
	}
	return rc < 0 ? rc : rbd_flush(image);
}

/* rbd_pool_metadata_set: key = value in the RADOS pool's RBD metadata. 0 or a negative errno. */
static jint pool_metadata_set(JNIEnv *env, jclass cls, jlong io, jstring key, jstring value)
{
	const char *k = (*env)->GetStringUTFChars(env, key, NULL);
	const char *v = (*env)->GetStringUTFChars(env, value, NULL);
	int rc = k && v ? rbd_pool_metadata_set(H2P(rados_ioctx_t, io), k, v) : -ENOMEM;
	if (k)
		(*env)->ReleaseStringUTFChars(env, key, k);
	if (v)
		(*env)->ReleaseStringUTFChars(env, value, v);
	return rc;
}

/* rbd_pool_metadata_remove: 0, -ENOENT when the key is absent, or another negative errno. */
static jint pool_metadata_remove(JNIEnv *env, jclass cls, jlong io, jstring key)
{
	const char *k = (*env)->GetStringUTFChars(env, key, NULL);
	if (!k)
		return -ENOMEM;
	int rc = rbd_pool_metadata_remove(H2P(rados_ioctx_t, io), k);
	(*env)->ReleaseStringUTFChars(env, key, k);
	return rc;
}

/* How many keys one rbd_pool_metadata_list call returns at most. */
#define METADATA_PAGE 64

/*
 * The RADOS pool's RBD metadata whose keys start with prefix, in key order, into keys and values as far as they
 * hold them (rbd_pool_metadata_list a page at a time, each after the last key read): how many there are, or a
 * negative errno. A pool without RBD metadata (-ENOENT) has none.
 */
static jint pool_metadata_list(JNIEnv *env, jclass cls, jlong io, jstring prefix, jobjectArray keys,
			       jobjectArray values)
{
	const char *p = (*env)->GetStringUTFChars(env, prefix, NULL);
	if (!p)
		return -ENOMEM;
	size_t plen = strlen(p);
	char *start = strdup(p);
	size_t kcap = 16384, vcap = 16384;
	char *kbuf = malloc(kcap), *vbuf = malloc(vcap);
	int rc = start && kbuf && vbuf ? 0 : -ENOMEM;
	size_t count = 0;
	bool more = true;
	while (rc == 0 && more) {
		size_t klen = kcap, vlen = vcap;
		rc = rbd_pool_metadata_list(H2P(rados_ioctx_t, io), start, METADATA_PAGE, kbuf, &klen, vbuf, &vlen);
		if (rc == -ERANGE) {
			char *k2 = realloc(kbuf, klen > kcap ? klen : kcap);
			if (k2)
				kbuf = k2;
			char *v2 = realloc(vbuf, vlen > vcap ? vlen : vcap);
			if (v2)
				vbuf = v2;
			rc = k2 && v2 ? 0 : -ENOMEM;
			kcap = klen > kcap ? klen : kcap;
			vcap = vlen > vcap ? vlen : vcap;
			continue;
		}
		if (rc == -ENOENT) {
			rc = 0;
			break;
		}
		if (rc < 0)
			break;
		size_t page = 0;
		const char *k = kbuf, *v = vbuf;
		for (; k < kbuf + klen && *k; k += strlen(k) + 1, v += strlen(v) + 1, page++) {
			if (strncmp(k, p, plen) != 0) {
				more = false;
				break;
			}
			set_string(env, keys, count, k);
			set_string(env, values, count, v);
			count++;
			char *last = strdup(k);
			if (!last) {
				rc = -ENOMEM;
				break;
			}
			free(start);
			start = last;
		}
		if (page < METADATA_PAGE)
			more = false;
	}
	(*env)->ReleaseStringUTFChars(env, prefix, p);
	free(start);
	free(kbuf);
	free(vbuf);
	return rc < 0 ? rc : (jint)count;
}

/* rados_mon_command with one JSON command: the answer's length (its bytes into out, as many fit) or -errno. */
static jint mon_command(JNIEnv *env, jclass cls, jlong cluster, jstring command, jbyteArray out)
{
	const char *c = (*env)->GetStringUTFChars(env, command, NULL);
	if (!c)
		return -ENOMEM;
	const char *cmd[1] = { c };
	char *outbuf = NULL, *outs = NULL;
	size_t outlen = 0, outslen = 0;
	int rc = rados_mon_command(H2P(rados_t, cluster), cmd, 1, "", 0, &outbuf, &outlen, &outs, &outslen);
	(*env)->ReleaseStringUTFChars(env, command, c);
	if (rc >= 0) {
		jsize cap = (*env)->GetArrayLength(env, out);
		(*env)->SetByteArrayRegion(env, out, 0, (jsize)outlen < cap ? (jsize)outlen : cap, (const jbyte *)outbuf);
		rc = (int)outlen;
	}
	if (outbuf)
		rados_buffer_free(outbuf);
	if (outs)
		rados_buffer_free(outs);
	return rc;
}

static const JNINativeMethod methods[] = {
	{ "abiVersion", "()I", (void *)abi_version },
	{ "strerror", "(I)Ljava/lang/String;", (void *)str_error },
	{ "connect", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;IIZ)J", (void *)connect_cluster },
	{ "shutdown", "(J)V", (void *)shutdown_cluster },
	{ "openPool", "(JLjava/lang/String;)J", (void *)open_pool },
	{ "poolFullTry", "(J)V", (void *)pool_full_try },
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
	{ "headerOid", "(J[B)I", (void *)header_oid },
	{ "metadataGet", "(JLjava/lang/String;Ljava/lang/String;[B)I", (void *)metadata_get },
	{ "metadataCas", "(JLjava/lang/String;Ljava/lang/String;[B[B)I", (void *)metadata_cas },
	{ "watch", "(JLjava/lang/String;J)J", (void *)watch_object },
	{ "unwatch", "(J)I", (void *)unwatch_object },
	{ "notify", "(JLjava/lang/String;I[J)I", (void *)notify_object },
	{ "notifyAck", "(JJ)I", (void *)notify_ack },
	{ "watchers", "(J[J[Ljava/lang/String;)I", (void *)list_watchers },
	{ "instanceId", "(J)J", (void *)instance_id },
	{ "blocklist", "(JLjava/lang/String;)I", (void *)blocklist_add },
	{ "otherWatchers", "(JJ)I", (void *)other_watchers },
	{ "lockAcquire", "(J)I", (void *)lock_acquire },
	{ "lockRelease", "(J)I", (void *)lock_release },
	{ "lockOwned", "(J)I", (void *)lock_owned },
	{ "lockBreakOthers", "(J)I", (void *)lock_break_others },
	{ "lockOtherOwner", "(J[Ljava/lang/String;)I", (void *)lock_other_owner },
	{ "features", "(J)J", (void *)image_features },
	{ "remove", "(JLjava/lang/String;)I", (void *)remove_image },
	{ "snapCreate", "(JLjava/lang/String;)I", (void *)snap_create },
	{ "snapRemove", "(JLjava/lang/String;)I", (void *)snap_remove },
	{ "clone", "(JLjava/lang/String;Ljava/lang/String;Ljava/lang/String;)I", (void *)clone_image },
	{ "imageId", "(JLjava/lang/String;[B)I", (void *)image_id },
	{ "trashMove", "(JLjava/lang/String;)I", (void *)trash_move },
	{ "trashRestore", "(JLjava/lang/String;Ljava/lang/String;)I", (void *)trash_restore },
	{ "trashRemove", "(JLjava/lang/String;)I", (void *)trash_remove },
	{ "listImages", "(J[Ljava/lang/String;)I", (void *)list_images },
	{ "listTrash", "(J[Ljava/lang/String;[Ljava/lang/String;)I", (void *)list_trash },
	{ "listSnapshots", "(JLjava/lang/String;[Ljava/lang/String;)I", (void *)list_snaps },
	{ "allocatedBytes", "(JLjava/lang/String;Ljava/lang/String;)J", (void *)allocated_bytes },
	{ "imageAllocatedBytes", "(J)J", (void *)image_allocated_bytes },
	{ "monCommand", "(JLjava/lang/String;[B)I", (void *)mon_command },
	{ "thickProvision", "(JJJJ)I", (void *)thick_provision },
	{ "poolMetadataSet", "(JLjava/lang/String;Ljava/lang/String;)I", (void *)pool_metadata_set },
	{ "poolMetadataRemove", "(JLjava/lang/String;)I", (void *)pool_metadata_remove },
	{ "poolMetadataList", "(JLjava/lang/String;[Ljava/lang/String;[Ljava/lang/String;)I", (void *)pool_metadata_list },
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
	header_updated_method = (*env)->GetStaticMethodID(env, cls, "headerUpdated", "(JIJJ)Z");
	if (!header_updated_method)
		return JNI_ERR;
	native_class = (*env)->NewGlobalRef(env, cls);
	if (!native_class || pthread_key_create(&attached_key, detach_thread) != 0)
		return JNI_ERR;
	jvm = vm;
	return JNI_VERSION_1_8;
}
