package io.nvmf4j.bdev;

import io.nvmf4j.rdma.NativeLibraryLoader;
import io.nvmf4j.storage.BdevException;

/**
 * The JNI entry points of {@code libnvmf4j_rbd} ({@code src/main/c-rbd/nvmf4j_rbd.c}): librados and librbd's
 * C API, registered by its {@code JNI_OnLoad} and loaded by the native module's {@link NativeLibraryLoader}
 * (java.library.path, then {@code META-INF/native/libnvmf4j_rbd_<arch>.so} from the jar). A library of its own,
 * so that machines without Ceph's client libraries still load the file bdev's.
 *
 * <p>Control calls return a handle or a negative errno. The asynchronous calls take the image handle, a tag
 * and native addresses, return 0 once librbd has the request (or a negative errno, and then no completion
 * comes), and end in exactly one {@link #completed(long, long)} on a librbd thread. None of them throws or
 * allocates on the Java heap.
 */
final class RbdNative {
    /** Must equal {@code NVMF4J_RBD_ABI_VERSION} in {@code nvmf4j_rbd.c}; JNI_OnLoad checks it. */
    static final int ABI_VERSION = 8;
    static final String NAME = "nvmf4j_rbd";
    /** Linux errno values librados and librbd return (negated). */
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EEXIST = 17;
    static final int EBUSY = 16;
    static final int EROFS = 30;
    static final int ETIMEDOUT = 110;
    static final int ERANGE = 34;
    /** EBLOCKLISTED: this client was blocklisted. */
    static final int ESHUTDOWN = 108;
    static final int ECANCELED = 125;
    /** {@link #thickProvision}: the client does not keep written zeros. */
    static final int ENOTSUP = 95;

    /** Null when the library loaded, else why not (one line). */
    private static final String FAILURE = NativeLibraryLoader.loadOrExplain(NAME, RbdNative.class,
        RbdNative::abiVersion, ABI_VERSION);

    private RbdNative() {
    }

    /** Throws {@link BdevException} naming the device and the cause unless the library is loaded. */
    static void ensureLoaded(String bdev) {
        if (FAILURE != null) {
            throw new BdevException("rbd bdev " + bdev + ": " + FAILURE + " (Debian: apt-get install librbd1)");
        }
    }

    /** Why {@link #thickProvision} failed with {@code rc}, in words. */
    static String thickError(int rc) {
        return rc == -ENOTSUP ? "the client does not keep written zeros (its rbd_discard_on_zeroed_write_same is not"
            + " false, so librbd would discard them)" : strerror(rc);
    }

    /** Called by the library on a librbd thread when the request tagged {@code tag} ends ({@code rc} < 0: -errno). */
    static void completed(long tag, long rc) {
        RbdBdev.completed(tag, rc);
    }

    /**
     * Called by the library on a librados thread when the image's header object (watched with {@link #watch}, the
     * watch {@code handle}) was notified ({@code err == 0}, notification {@code notifyId}): true has the library
     * acknowledge it at once, false means Java acknowledges it later ({@link #notifyAck}); the notifier waits for
     * the acknowledgement. Or when the watch broke ({@code err} < 0: it must be made again; the result is unused).
     */
    static boolean headerUpdated(long tag, int err, long handle, long notifyId) {
        return RbdBdev.headerUpdated(tag, err, handle, notifyId);
    }

    static native int abiVersion();
    static native String strerror(int errno);
    /**
     * rados_create2 + conf file + keyring + timeouts (monitor and connect; OSD ops) + librbd's cache on or off +
     * zeros of a writesame written, not discarded ({@link #thickProvision}) + rados_connect: the cluster handle or
     * -errno.
     */
    static native long connect(String cephConf, String clientName, String keyring, int timeoutSeconds,
                               int osdOpTimeoutSeconds, boolean cache);
    static native void shutdown(long cluster);
    static native long openPool(long cluster, String pool);
    /**
     * Makes writes on {@code ioctx} (and on the images opened on it) fail at once with -EDQUOT or -ENOSPC while the
     * pool is at its quota or the cluster full, instead of waiting in the client until it is not
     * ({@code rados_set_pool_full_try}).
     */
    static native void poolFullTry(long ioctx);
    static native void closePool(long ioctx);
    static native int create(long ioctx, String image, long sizeBytes);
    static native long open(long ioctx, String image);
    static native int close(long image);
    static native long size(long image);
    static native int resize(long image, long sizeBytes);
    static native int flush(long image);
    static native int aioRead(long image, long tag, long offset, int length, long address);
    static native int aioWrite(long image, long tag, long offset, int length, long address);
    static native int aioFlush(long image, long tag);
    static native int aioDiscard(long image, long tag, long offset, long length);
    static native int aioWriteZeroes(long image, long tag, long offset, long length);
    /** The name of the image's header object into {@code out}: its length or -errno. */
    static native int headerOid(long image, byte[] out);
    /**
     * The value of metadata {@code key} of the image with header object {@code headerOid} into {@code out}, read
     * with librados (safe in a watch callback, unlike librbd): its length, -ENOENT, -ERANGE (out too small), -errno.
     */
    static native int metadataGet(long ioctx, String headerOid, String key, byte[] out);
    /** Sets metadata {@code key} to {@code value} if it is still {@code expected} (null: absent): 0, -ECANCELED. */
    static native int metadataCas(long ioctx, String headerOid, String key, byte[] expected, byte[] value);
    /** Watches {@code oid}: the watch's handle or -errno; notifications call {@link #headerUpdated}. */
    static native long watch(long ioctx, String oid, long tag);
    static native int unwatch(long watch);
    /**
     * Notifies {@code oid}'s watchers and waits up to {@code timeoutMs} for their acks: how many watches did not
     * acknowledge in time (0: every one did), their (client id, cookie) pairs written into {@code timedOut} as far as
     * it holds them; -ETIMEDOUT when some did not and the reply does not say which; or another -errno.
     */
    static native int notify(long ioctx, String oid, int timeoutMs, long[] timedOut);
    /** Acknowledges notification {@code notifyId} on watch {@code handle} (deferred by {@link #headerUpdated}). */
    static native int notifyAck(long handle, long notifyId);
    /**
     * The watchers of the image's header (rbd_watchers_list): client ids into {@code ids}, addresses (what
     * {@link #blocklist} takes) into {@code addrs}, as many as they hold; how many there are, or -errno.
     */
    static native int watchers(long image, long[] ids, String[] addrs);
    /** This client's id ({@code client.<id>}), as watchers and notify replies name it. */
    static native long instanceId(long cluster);
    /**
     * Blocklists the client at {@code addr} (rados_blocklist_add, Ceph's default expiry) and waits for the OSD map
     * that lists it (rados_wait_for_latest_osdmap): 0 or -errno.
     */
    static native int blocklist(long cluster, String addr);
    /**
     * How many watches of the image's header belong to clients other than {@code cluster} (rbd_watchers_list: the
     * gateways serving it and librbd in every client that has it open): a count or -errno.
     */
    static native int otherWatchers(long cluster, long image);
    /** rbd_lock_acquire(EXCLUSIVE): 0, -EROFS when a peer holds it, -errno. */
    static native int lockAcquire(long image);
    static native int lockRelease(long image);
    /** 1 when this client owns the exclusive lock, 0 when not, -errno. */
    static native int lockOwned(long image);
    /** Breaks every other owner's exclusive lock (they are blocklisted): how many, or -errno. */
    static native int lockBreakOthers(long image);
    /**
     * 1 with the owner's name in {@code out[0]} when another client owns the image's exclusive lock, 0 when nobody
     * or this client does, -errno.
     */
    static native int lockOtherOwner(long image, String[] out);
    /** The image's features (rbd_get_features: {@code RBD_FEATURE_*} bits), or -errno. */
    static native long features(long image);
    /** RBD_FEATURE_EXCLUSIVE_LOCK. */
    static final long FEATURE_EXCLUSIVE_LOCK = 1L << 2;

    // ------------------------------------------------------------------ pools of volumes (RbdPool)

    /** rbd_remove: 0, -ENOENT, -ENOTEMPTY (it has snapshots), -EBUSY (open elsewhere), -errno. */
    static native int remove(long ioctx, String image);
    /** rbd_snap_create2 without librbd's quiesce notification (the caller held the writes): 0 or -errno. */
    static native int snapCreate(long image, String snapshot);
    static native int snapRemove(long image, String snapshot);
    /** rbd_clone3 of {@code parent@snapshot} into {@code child} of the same pool, clone format 2: 0 or -errno. */
    static native int clone(long ioctx, String parent, String snapshot, String child);
    /** The image's id into {@code idOut}: the id's length, -ENOENT (no such image) or -errno. */
    static native int imageId(long ioctx, String image, byte[] idOut);
    /** rbd_trash_move, no deferment: 0 or -errno. */
    static native int trashMove(long ioctx, String image);
    static native int trashRestore(long ioctx, String id, String image);
    static native int trashRemove(long ioctx, String id);
    /** The pool's image names into {@code names} as far as it holds them: how many there are, or -errno. */
    static native int listImages(long ioctx, String[] names);
    /** The pool's trash (ids, names) as far as the arrays hold them: how many entries, or -errno. */
    static native int listTrash(long ioctx, String[] ids, String[] names);
    /** The image's user snapshots into {@code names}: how many there are, or -errno. */
    static native int listSnapshots(long ioctx, String image, String[] names);
    /** Bytes of the objects the image (at {@code snapshot}, when not null) wrote itself, whole objects; or -errno. */
    static native long allocatedBytes(long ioctx, String image, String snapshot);
    /** {@link #allocatedBytes} of an image open on {@code image} (its head): bytes, or -errno. Blocking. */
    static native long imageAllocatedBytes(long image);
    /** A monitor command (JSON): the answer's length, its bytes into {@code out} as far as it holds them; -errno. */
    static native int monCommand(long cluster, String command, byte[] out);
    /**
     * Writes zeros over {@code [offset, offset + length)} of the open image (of client {@code cluster}) with
     * rbd_aio_writesame, an object at a time, several at once, then flushes: every object of the range exists
     * afterwards. Offset and length are multiples of 512. 0, -ENOTSUP when the client's
     * {@code rbd_discard_on_zeroed_write_same} is not off (librbd would discard the zeros instead), or the first
     * -errno of a write (those sent are waited for).
     */
    static native int thickProvision(long cluster, long image, long offset, long length);
    /** rbd_pool_metadata_set: {@code key = value} in the RADOS pool's RBD metadata; 0 or -errno. */
    static native int poolMetadataSet(long ioctx, String key, String value);
    /** rbd_pool_metadata_remove: 0, -ENOENT (absent) or -errno. */
    static native int poolMetadataRemove(long ioctx, String key);
    /**
     * The RADOS pool's RBD metadata with keys starting with {@code prefix}, in key order, into {@code keys} and
     * {@code values} as far as they hold them: how many there are, or -errno.
     */
    static native int poolMetadataList(long ioctx, String prefix, String[] keys, String[] values);
}
