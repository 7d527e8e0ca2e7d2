package io.nvmf4j.bdev;

import io.nvmf4j.storage.BdevException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * An rbd bdev's client of the Ceph cluster: the connection to its image ({@link Conn}: cluster, pool, image), what
 * uses it (control calls through {@link #withConn}, requests in librbd counted by {@link #enter}/{@link #leave}),
 * and what happens when Ceph blocklists it. Then every operation of the client fails with ESHUTDOWN: whoever sees
 * that calls {@link #blocklisted}, the device is fenced ({@link #isFenced}) and this reconnects on a thread of its own
 * ({@code rbd-reconnect-<name>}): a new client (a new address, not on the blocklist), the pool and the image opened
 * again, retried after 1 s, doubling up to 30 s, while that fails; swapped in ({@link Reconnect} moves the header
 * watch and drains the header listeners); the old client closed once the requests still on it have ended. The
 * control plane hears of both ends through {@link #onHealth}.
 *
 * <p>This object's monitor guards the current connection's identity, {@code closed}, {@code fenced}'s writes and the
 * counts of requests in librbd (per connection and in all); {@link #retire} and {@link #drainAndClose} wait on it.
 */
final class RbdConnection {
    private static final Logger LOG = LoggerFactory.getLogger(RbdConnection.class);

    /** Blocklist events and reconnects of every rbd bdev of this process (the service's metrics). */
    private static final LongAdder BLOCKLISTED = new LongAdder();
    private static final LongAdder RECONNECTED = new LongAdder();
    private static final long RECONNECT_FIRST_MS = 1000;
    private static final long RECONNECT_MAX_MS = 30_000;

    /**
     * One connection to the image (what a blocklisted client loses and {@link #reconnect} replaces) and how many
     * requests are in librbd on it (guarded by the {@link RbdConnection}'s monitor).
     */
    static final class Conn {
        final long cluster;
        final long ioctx;
        final long image;
        int outstanding;

        Conn(long cluster, long ioctx, long image) {
            this.cluster = cluster;
            this.ioctx = ioctx;
            this.image = image;
        }

        void close() {
            RbdNative.close(image);
            RbdNative.closePool(ioctx);
            RbdNative.shutdown(cluster);
        }
    }

    /** A control call on the current connection, which no reconnect replaces meanwhile. */
    @FunctionalInterface
    interface ConnCall {
        long call(Conn c) throws IOException;
    }

    /** What the device does around a reconnect, for the parts that live with the image (header watch, lock). */
    interface Reconnect {
        /** The client was found blocklisted: it holds nothing any more (its exclusive lock is gone). */
        void blocklisted();

        /**
         * Before the new client replaces the old one: ends the header watch on the old one; whether the header must
         * be watched on the new one.
         */
        boolean leaveOldClient();

        /** After: ends a watch made on the old client meanwhile and, when {@code watch}, watches on {@code fresh}. */
        void joinNewClient(Conn fresh, boolean watch);

        /** Tells the header listeners of the new client and waits until they have drained (still fenced). */
        void drain();
    }

    private final String name;
    private final int blockSize;
    private final RbdBdev.Options options;
    private final Reconnect reconnect;
    /** The current connection; replaced by {@link #reconnect} under the write half of {@link #connLock}. */
    private volatile Conn conn;
    /**
     * Control calls (metadata, watch, notify, lock, size) hold the read half while they use {@link #conn}; a
     * reconnect swaps it under the write half, so no control call still uses the old connection when it is closed.
     * The I/O path does not take it (each request keeps the connection it went to, see {@link #enter}).
     */
    private final ReentrantReadWriteLock connLock = new ReentrantReadWriteLock();
    /** Blocklisted and not reconnected yet: I/O ends with ANA Inaccessible. Written under this, read anywhere. */
    private volatile boolean fenced;
    private boolean closed;
    /** Requests in librbd on any connection. */
    private int outstanding;
    /** A check whether an EROFS means blocklisted runs now. */
    private final AtomicBoolean probing = new AtomicBoolean();
    private volatile Consumer<RbdBdev.Health> health = h -> { };
    private final LongAdder blocklistedCount = new LongAdder();

    RbdConnection(String name, int blockSize, RbdBdev.Options options, Conn conn, Reconnect reconnect) {
        this.name = name;
        this.blockSize = blockSize;
        this.options = options;
        this.conn = conn;
        this.reconnect = reconnect;
    }

    /** A new client of the cluster with the pool and the image open (created when asked and absent). */
    static Conn connect(String what, int blockSize, long numBlocks, RbdBdev.Options o) {
        long cluster = RbdNative.connect(o.cephConf(), o.clientName(), o.keyring(), o.timeoutSeconds(),
            o.osdOpTimeoutSeconds(), o.cache());
        if (cluster < 0) {
            throw new BdevException(what + "cannot connect to the Ceph cluster of " + o.cephConf() + " as "
                + o.clientName() + " (keyring " + o.keyring() + "): " + RbdNative.strerror((int) cluster)
                + hint((int) cluster));
        }
        long ioctx = 0;
        try {
            ioctx = RbdNative.openPool(cluster, o.pool());
            if (ioctx < 0) {
                throw new BdevException(what + "cannot open pool '" + o.pool() + "': "
                    + RbdNative.strerror((int) ioctx));
            }
            RbdNative.poolFullTry(ioctx); // a full pool fails a write with Capacity Exceeded, does not hold it
            return new Conn(cluster, ioctx, openOrCreate(what, ioctx, blockSize, numBlocks, o));
        } catch (RuntimeException e) {
            if (ioctx > 0) {
                RbdNative.closePool(ioctx);
            }
            RbdNative.shutdown(cluster);
            throw e;
        }
    }

    private static long openOrCreate(String what, long ioctx, int blockSize, long numBlocks, RbdBdev.Options o) {
        long image = RbdNative.open(ioctx, o.image());
        if (image == -RbdNative.ENOENT && o.create()) {
            if (numBlocks <= 0) {
                throw new BdevException(what + "image " + o.pool() + "/" + o.image()
                    + " does not exist; numBlocks must give the size of the image to create");
            }
            int rc = RbdNative.create(ioctx, o.image(), numBlocks * blockSize);
            if (rc < 0 && rc != -RbdNative.EEXIST) {
                throw new BdevException(what + "cannot create image " + o.pool() + "/" + o.image() + ": "
                    + RbdNative.strerror(rc));
            }
            image = RbdNative.open(ioctx, o.image());
        }
        if (image == -RbdNative.ENOENT) {
            throw new BdevException(what + "no image '" + o.image() + "' in pool '" + o.pool() + "'"
                + (o.create() ? "" : " (set create to make it)"));
        }
        if (image < 0) {
            throw new BdevException(what + "cannot open image " + o.pool() + "/" + o.image() + ": "
                + RbdNative.strerror((int) image));
        }
        return image;
    }

    /** What a connect error usually means. */
    private static String hint(int rc) {
        return switch (-rc) {
            case 1, 13 -> " (the key does not match the client's, or the client lacks the capabilities)";
            case 110 -> " (no monitor answered: is the cluster running and its 'mon host' reachable?)";
            case 2 -> " (a file named in the config, or the keyring, is missing)";
            default -> "";
        };
    }

    // ------------------------------------------------------------------ control calls

    /**
     * Runs {@code call}, which returns a status (0, a count or -errno), on the current connection (read half of
     * connLock); a blocklisted result starts recovery. Calls that return a handle use {@link #withConnLong}.
     */
    int withConn(ConnCall call) throws IOException {
        long rc = withConnLong(call);
        if (rc != (int) rc) {
            throw new IllegalStateException("rbd bdev " + name + ": a handle where a status was expected");
        }
        return (int) rc;
    }

    long withConnLong(ConnCall call) throws IOException {
        connLock.readLock().lock();
        long rc;
        try {
            rc = call.call(conn);
        } finally {
            connLock.readLock().unlock();
        }
        if (rc == -RbdNative.ESHUTDOWN) {
            blocklisted("a control call");
        }
        return rc;
    }

    /** The current connection, for a call that needs no protection from a reconnect (see {@link #withConn}). */
    Conn current() {
        return conn;
    }

    /** Why {@code what} of the image failed with {@code rc}, naming the device and the image. */
    IOException failure(String what, int rc) {
        return new IOException("rbd bdev " + name + ": cannot " + what + " " + options.pool() + "/"
            + options.image() + ": " + RbdNative.strerror(rc)
            + (rc == -RbdNative.ESHUTDOWN ? " (this client was blocklisted; reconnecting)" : ""));
    }

    // ------------------------------------------------------------------ requests in librbd

    /**
     * A request goes to librbd: the current connection, counted until {@link #leave}; null when the device is closed
     * or fenced ({@link #isClosed} tells which).
     */
    synchronized Conn enter() {
        if (closed || fenced) {
            return null;
        }
        Conn c = conn;
        c.outstanding++;
        outstanding++;
        return c;
    }

    /** A request that {@link #enter} counted on {@code c} ended. */
    synchronized void leave(Conn c) {
        c.outstanding--;
        outstanding--;
        if ((closed && outstanding == 0) || (c != conn && c.outstanding == 0)) {
            notifyAll();
        }
    }

    /** Requests in librbd now. */
    synchronized int outstanding() {
        return outstanding;
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /** Whether the device is blocklisted and not reconnected yet (its I/O ends with ANA Inaccessible). */
    boolean isFenced() {
        return fenced;
    }

    // ------------------------------------------------------------------ blocklisted: fence and reconnect

    /** Tells {@code listener} (on the reconnect thread) when the device is fenced and when it serves again. */
    void onHealth(Consumer<RbdBdev.Health> listener) {
        health = listener;
    }

    /** How often this device's client was found blocklisted. */
    long blocklistedCount() {
        return blocklistedCount.sum();
    }

    static long blocklistedTotal() {
        return BLOCKLISTED.sum();
    }

    static long reconnectedTotal() {
        return RECONNECTED.sum();
    }

    /** {@code what} failed with ESHUTDOWN: this client was blocklisted; fence the device and reconnect (once). */
    void blocklisted(String what) {
        synchronized (this) {
            if (fenced || closed) {
                return;
            }
            fenced = true;
        }
        reconnect.blocklisted();
        blocklistedCount.increment();
        BLOCKLISTED.increment();
        LOG.error("rbd bdev {}: Ceph blocklisted this gateway's client of {}/{} ({} failed with ESHUTDOWN; another"
            + " gateway broke its exclusive lock?): its I/O ends with ANA Inaccessible while it reconnects as a new"
            + " client", name, options.pool(), options.image(), what);
        Thread t = new Thread(this::reconnect, "rbd-reconnect-" + name);
        t.setDaemon(true);
        t.start();
    }

    /**
     * A write was refused with EROFS although this gateway took the exclusive lock: either the lock was broken and
     * this client blocklisted, or it lost the lock otherwise. {@code probe} (a read of the header) tells (ESHUTDOWN:
     * blocklisted); on its own thread, one at a time.
     */
    void suspectBlocklisted(ConnCall probe) {
        if (fenced || !probing.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                int rc = withConn(probe);
                if (rc != -RbdNative.ESHUTDOWN) {
                    LOG.warn("rbd bdev {}: a write was refused (EROFS) while this gateway held the exclusive lock of"
                        + " {}/{}, but its client is not blocklisted", name, options.pool(), options.image());
                }
            } catch (IOException e) {
                LOG.warn("rbd bdev {}: {}", name, e.getMessage());
            } finally {
                probing.set(false);
            }
        }, "rbd-probe-" + name);
        t.setDaemon(true);
        t.start();
    }

    /**
     * The reconnect thread: tells the control plane (FENCED), makes a new client and opens the image (again after
     * 1 s, doubling up to 30 s, while that fails), swaps it in, watches the header again, tells the header listeners
     * (what is kept in the image may have changed meanwhile) and the control plane (RECOVERED), and closes the old
     * client once the requests still on it have ended.
     */
    private void reconnect() {
        long started = System.nanoTime();
        tellHealth(RbdBdev.Health.FENCED);
        long delay = RECONNECT_FIRST_MS;
        String what = "rbd bdev " + name + ": ";
        while (!isClosed()) {
            Conn fresh;
            try {
                fresh = connect(what, blockSize, 0, options);
            } catch (BdevException e) {
                LOG.warn("{}reconnecting failed ({}); again in {} ms", what, e.getMessage(), delay);
                if (!sleep(delay)) {
                    return;
                }
                delay = Math.min(delay * 2, RECONNECT_MAX_MS);
                continue;
            }
            Conn old = swap(fresh);
            if (old == null) {
                fresh.close(); // closed meanwhile
                return;
            }
            // what is kept in the image may have changed meanwhile, and commands checked against the old state may
            // still be on their way to the device: they must end (fenced) before the new client takes I/O
            reconnect.drain();
            synchronized (this) {
                fenced = false;
            }
            RECONNECTED.increment();
            LOG.info("{}serves {}/{} again as a new client, {} ms after it was blocklisted (without the exclusive"
                + " lock)", what, options.pool(), options.image(), (System.nanoTime() - started) / 1_000_000);
            tellHealth(RbdBdev.Health.RECOVERED);
            retire(old); // after: closing a blocklisted client may take its time
            LOG.info("{}closed the blocklisted client", what);
            return;
        }
    }

    /** Puts {@code fresh} in place of the current connection and watches the header on it; the old one, or null. */
    private Conn swap(Conn fresh) {
        if (isClosed()) {
            return null;
        }
        boolean watch = reconnect.leaveOldClient();
        Conn old;
        connLock.writeLock().lock();
        try {
            synchronized (this) {
                if (closed) {
                    return null; // drainAndClose's caller closes the current one
                }
                old = conn;
                conn = fresh;
            }
        } finally {
            connLock.writeLock().unlock();
        }
        reconnect.joinNewClient(fresh, watch);
        return old;
    }

    /** Closes a replaced connection once the requests still in librbd on it have ended. */
    private void retire(Conn old) {
        synchronized (this) {
            boolean interrupted = false;
            while (old.outstanding > 0) {
                try {
                    wait(10_000);
                    if (old.outstanding > 0) {
                        LOG.warn("rbd bdev {}: {} requests still on the blocklisted client", name, old.outstanding);
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        old.close();
    }

    private void tellHealth(RbdBdev.Health h) {
        try {
            health.accept(h);
        } catch (RuntimeException e) {
            LOG.error("rbd bdev {}: the control plane's health listener failed", name, e);
        }
    }

    /** Sleeps {@code ms}; false when interrupted (the interrupt is kept). */
    static boolean sleep(long ms) {
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ------------------------------------------------------------------ close

    /**
     * Marks the connection closed (no request enters any more, no reconnect swaps) and waits until every request in
     * librbd has ended; false when it was closed already.
     */
    synchronized boolean drainAndClose() {
        if (closed) {
            return false;
        }
        closed = true;
        boolean interrupted = false;
        while (outstanding > 0) {
            try {
                wait(10_000);
                if (outstanding > 0) {
                    LOG.warn("rbd bdev {}: still waiting for {} requests", name, outstanding);
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /** After {@link #drainAndClose}: flushes librbd's cache and closes image, pool and client. */
    void flushAndShutdown() {
        connLock.writeLock().lock();
        Conn c = conn;
        try {
            int rc = RbdNative.flush(c.image);
            if (rc == -RbdNative.EROFS) {
                // another gateway keeps the exclusive lock: this one gave it up, and flushed its cache then
                LOG.info("rbd bdev {}: not the exclusive lock's owner at close; nothing of it is cached", name);
            } else if (rc < 0) {
                LOG.error("rbd bdev {}: the final flush of {}/{} failed: {}", name, options.pool(), options.image(),
                    RbdNative.strerror(rc));
            }
        } finally {
            c.close();
            connLock.writeLock().unlock();
        }
    }
}
