package io.nvmf4j.bdev;

import io.nvmf4j.bdev.RbdBdev.LockHeldElsewhere;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * An rbd bdev's hold on its image's exclusive lock (librbd's {@code rbd_lock_acquire(EXCLUSIVE)}): taken and given up
 * by the control plane, never broken while its owner is alive. Whether this gateway holds it decides what a write
 * refused with EROFS means (RbdBdev#failed). This object's monitor serializes taking and giving up; blocking, for
 * the control path.
 */
final class RbdExclusiveLock {
    private static final Logger LOG = LoggerFactory.getLogger(RbdExclusiveLock.class);

    private final String name;
    private final RbdBdev.Options options;
    private final RbdConnection connection;
    private final RbdHeaderWatch header;
    /** This gateway took the exclusive lock ({@link #acquire}) and has not given it up, nor been blocklisted. */
    private volatile boolean held;

    RbdExclusiveLock(String name, RbdBdev.Options options, RbdConnection connection, RbdHeaderWatch header) {
        this.name = name;
        this.options = options;
        this.connection = connection;
        this.header = header;
    }

    /** See RbdBdev#acquireExclusiveLock. */
    synchronized void acquire() throws IOException {
        if (connection.isFenced()) {
            throw failure("take", -RbdNative.ESHUTDOWN);
        }
        int rc = connection.withConn(c -> RbdNative.lockAcquire(c.image));
        if (rc == 0) {
            held = true;
            LOG.info("rbd bdev {}: holds the exclusive lock of {}/{}", name, options.pool(), options.image());
            return;
        }
        if (rc == -RbdNative.EROFS) {
            throw new LockHeldElsewhere("rbd bdev " + name + ": another gateway holds the exclusive lock of "
                + options.pool() + "/" + options.image() + " and keeps it (it answers): not broken; make that"
                + " gateway non-optimized first");
        }
        if (rc != -RbdNative.EBUSY && rc != -RbdNative.ETIMEDOUT) {
            throw failure("take", rc); // no exclusive-lock feature (EINVAL), blocklisted, ...: nothing to break
        }
        if (header.watchedByOthers()) {
            throw new LockHeldElsewhere("rbd bdev " + name + ": the owner of the exclusive lock of "
                + options.pool() + "/" + options.image() + " did not hand it over (" + RbdNative.strerror(rc)
                + ") but still watches the image (alive): not broken; Ceph drops a dead client's watch after"
                + " osd_client_watch_timeout (30 s), librbd then breaks its lock itself");
        }
        LOG.warn("rbd bdev {}: the owner of the exclusive lock of {}/{} did not hand it over ({}) and no longer"
            + " watches the image; breaking its lock (Ceph blocklists it)", name, options.pool(),
            options.image(), RbdNative.strerror(rc));
        int broken = connection.withConn(c -> RbdNative.lockBreakOthers(c.image));
        if (broken < 0) {
            throw failure("break the previous owner's", broken);
        }
        rc = connection.withConn(c -> RbdNative.lockAcquire(c.image));
        if (rc < 0) {
            throw failure("take", rc);
        }
        held = true;
        LOG.info("rbd bdev {}: holds the exclusive lock of {}/{} (broke {} other owner(s))", name,
            options.pool(), options.image(), broken);
    }

    /** See RbdBdev#releaseExclusiveLock. */
    synchronized void release() throws IOException {
        held = false;
        if (connection.isFenced() || connection.withConn(c -> RbdNative.lockOwned(c.image)) != 1) {
            return;
        }
        int rc = connection.withConn(c -> RbdNative.lockRelease(c.image));
        if (rc < 0) {
            throw failure("release", rc);
        }
        LOG.info("rbd bdev {}: released the exclusive lock of {}/{}", name, options.pool(), options.image());
    }

    /** Whether this client owns the image's exclusive lock now (asked of librbd). */
    boolean owns() throws IOException {
        int rc = connection.withConn(c -> RbdNative.lockOwned(c.image));
        if (rc < 0) {
            throw failure("query", rc);
        }
        return rc == 1;
    }

    /** Whether this gateway took the lock and has not given it up (nor been blocklisted since). */
    boolean held() {
        return held;
    }

    /** The client was blocklisted: it holds no lock any more, and the reconnected one does not take it back. */
    void lost() {
        held = false;
    }

    private IOException failure(String what, int rc) {
        return connection.failure(what + " the exclusive lock of", rc);
    }
}
