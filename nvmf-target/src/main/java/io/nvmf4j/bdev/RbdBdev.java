package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Ceph RBD image, through librbd's asynchronous C API ({@link RbdNative}). Each operation takes a slot in
 * this device's table of outstanding requests (the {@link BdevIo} and its operation in parallel arrays,
 * grown by doubling under a short monitor, never per I/O), goes to librbd with the tag (device index, slot),
 * and ends when librbd calls back on its own thread: {@link BdevIo#bdevCompleteAsync(int)} hands the status to
 * the submitter's poll group. Nothing is allocated on the Java heap per I/O.
 *
 * <p>Durability: librbd's cache ({@code rbd_cache}) is off unless {@link Options#cache} turns it on: then every write
 * is on the OSDs when librbd completes it, reads through any gateway see it, and the device has no volatile write
 * cache. With the cache on (an image one gateway serves) it is this device's volatile write cache: Flush is
 * {@code rbd_aio_flush}; a write, Write Zeroes or Deallocate with FUA, and any of them while the write cache is
 * turned off (Set Features 06h), is followed by an {@code rbd_aio_flush} before it completes.
 *
 * <p>Deallocate is {@code rbd_aio_discard} with {@code rbd_skip_partial_discard} off (set at connect), so a
 * range smaller than an object or not aligned to one is zeroed rather than skipped, and every deallocated
 * block reads back as zeros; whole objects are freed. Write Zeroes is {@code rbd_aio_write_zeroes}.
 * Compare is the command layer's read-and-compare (the engine has no fused Compare and Write, so
 * {@code rbd_aio_compare_and_write} is not needed).
 *
 * <p>Blocklisted: when another gateway breaks this client's exclusive lock, Ceph blocklists the client and every
 * operation of it fails with ESHUTDOWN (EBLOCKLISTED). The device notices that (an I/O or control call returning it;
 * a write refused with EROFS while it holds the lock explicitly, which it then checks with a read of the header; the
 * header watch failing to come back), is <em>fenced</em> ({@link Health#FENCED}: I/O completes at once with ANA
 * Inaccessible) and reconnects at once on a thread of its own ({@code rbd-reconnect-<name>}): a new RADOS client
 * (a new address, not on the blocklist), the pool and the image opened again, the header watched again; retried
 * after 1 s, doubling up to 30 s, while it fails. Before it lets I/O through again, the header's listeners read what
 * is kept there again and drain the commands that passed their checks against the old state (a command held above
 * the device while the client was cut off must not land through the new one). Then {@link Health#RECOVERED}: it
 * serves again, without the exclusive lock (taking it is the control plane's decision). Requests already in librbd
 * end on the old client (failing); it is closed once they have.
 *
 * <p>Other gateways fence this one the same way: a gateway that does not acknowledge a change of the state kept in
 * the header ({@link #notifyHeader}) is blocklisted by the one that made it ({@link #blocklist}).
 */
public final class RbdBdev extends AbstractBdev {
    private static final Logger LOG = LoggerFactory.getLogger(RbdBdev.class);

    /**
     * What one rbd bdev opens: pool and image, how to reach the cluster (monitor timeout, OSD op timeout), and
     * whether librbd's cache is on.
     */
    public record Options(String pool, String image, String cephConf, String clientName, String keyring,
                          boolean create, int timeoutSeconds, int osdOpTimeoutSeconds, boolean cache) {
        /** The defaults of the OSD op timeout and the cache (off). */
        public Options(String pool, String image, String cephConf, String clientName, String keyring, boolean create,
                       int timeoutSeconds) {
            this(pool, image, cephConf, clientName, keyring, create, timeoutSeconds,
                io.nvmf4j.config.BdevConfig.DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS, false);
        }
    }

    private static final int OP_READ = BdevErrors.OP_READ;
    private static final int OP_WRITE = BdevErrors.OP_WRITE;
    private static final int OP_FLUSH = BdevErrors.OP_FLUSH;
    private static final int OP_WRITE_ZEROES = BdevErrors.OP_WRITE_ZEROES;
    private static final int OP_DEALLOCATE = BdevErrors.OP_DEALLOCATE;
    /** Set on an operation that is followed by a flush before it completes (FUA, write cache off). */
    private static final int THEN_FLUSH = 0x10;
    /** Set while the flush after a write runs; the status is reported as the write's. */
    private static final int FLUSHING = 0x20;
    private static final int OP_MASK = 0x0F;
    private static final int INITIAL_SLOTS = 256;
    private static final long GIB = 1L << 30;

    /** Open rbd bdevs by index (the high half of a tag); replaced whole on open and close. */
    private static volatile RbdBdev[] registry = new RbdBdev[0];

    /** What a gateway's device tells the control plane: blocklisted and reconnecting, or serving again. */
    public enum Health { FENCED, RECOVERED }

    /**
     * One connection to the image (what a blocklisted client loses and {@link #reconnect} replaces) and how many
     * requests are in librbd on it (guarded by the device's monitor).
     */
    private static final class Conn {
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

    /** Blocklist events and reconnects of every rbd bdev of this process (the service's metrics). */
    private static final java.util.concurrent.atomic.LongAdder BLOCKLISTED = new java.util.concurrent.atomic.LongAdder();
    private static final java.util.concurrent.atomic.LongAdder RECONNECTED = new java.util.concurrent.atomic.LongAdder();
    private static final java.util.concurrent.atomic.LongAdder REWATCH_FAILURES =
        new java.util.concurrent.atomic.LongAdder();
    private static final long RECONNECT_FIRST_MS = 1000;
    private static final long RECONNECT_MAX_MS = 30_000;

    private final Options options;
    /** The current connection; replaced by {@link #reconnect} under the write half of {@link #connLock}. */
    private volatile Conn conn;
    /**
     * Control calls (metadata, watch, notify, lock, size) hold the read half while they use {@link #conn}; a
     * reconnect swaps it under the write half, so no control call still uses the old connection when it is closed.
     * The I/O path does not take it (each request keeps the connection it went to, see {@link #conns}).
     */
    private final java.util.concurrent.locks.ReentrantReadWriteLock connLock =
        new java.util.concurrent.locks.ReentrantReadWriteLock();
    private final int index;
    private final DiscardLimits limits;
    /** Whether librbd's cache is on (Options#cache): the only volatile write cache this device has. */
    private final boolean cache;
    /** The host's Volatile Write Cache setting (Set Features 06h); matters only with {@link #cache}. */
    private volatile boolean writeCache;
    /** Blocklisted and not reconnected yet: I/O ends with ANA Inaccessible. Written under this, read anywhere. */
    private volatile boolean fenced;
    /** This gateway took the exclusive lock (acquireExclusiveLock) and has not given it up. */
    private volatile boolean lockHeld;
    /** A check whether an EROFS means blocklisted runs now. */
    private final java.util.concurrent.atomic.AtomicBoolean probing = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile java.util.function.Consumer<Health> health = h -> { };
    private final java.util.concurrent.atomic.LongAdder blocklistedCount = new java.util.concurrent.atomic.LongAdder();
    /** Flushes handed to librbd: Flush commands and those that follow a durable write, Write Zeroes or Deallocate. */
    private final java.util.concurrent.atomic.LongAdder flushes = new java.util.concurrent.atomic.LongAdder();
    // the outstanding requests: slot -> io, op and the connection it went to; free slots on a stack; guarded by this
    private BdevIo[] ios = new BdevIo[INITIAL_SLOTS];
    private int[] ops = new int[INITIAL_SLOTS];
    private Conn[] conns = new Conn[INITIAL_SLOTS];
    private int[] free = new int[INITIAL_SLOTS];
    private int freeCount;
    private int outstanding;
    private boolean closed;
    /** Told when another client notifies the image's header (see {@link #watchHeader}); any thread. */
    private final java.util.List<HeaderListener> headerListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Serializes the control calls (watch, exclusive lock); never taken on the I/O path. */
    private final Object control = new Object();
    /**
     * The image's header object, {@code rbd_header.<id>}; null until first needed (set under control, read without
     * it: the watch callback must not wait for a control call, which may itself wait for librbd's callbacks).
     */
    private volatile String headerOid;
    /** The header watch's handle, 0 when none. Guarded by control. */
    private long watch;
    /** The connection {@link #watch} was made on (its ioctx must outlive the watch). Guarded by control. */
    private Conn watchConn;

    private RbdBdev(String name, int blockSize, long numBlocks, Options options, Conn conn) {
        super(name, blockSize, numBlocks);
        this.options = options;
        this.cache = options.cache();
        this.writeCache = options.cache();
        this.conn = conn;
        this.limits = new DiscardLimits(true, true, true, true, 256, GIB / blockSize, 16 * GIB / blockSize);
        for (int i = 0; i < INITIAL_SLOTS; i++) {
            free[i] = INITIAL_SLOTS - 1 - i;
        }
        freeCount = INITIAL_SLOTS;
        this.index = register(this);
    }

    /**
     * Connects to the cluster, opens the pool and the image (creating it with {@code numBlocks} blocks when
     * {@code options.create()} and it is absent) and grows the image to {@code numBlocks} blocks when it is
     * smaller; {@code numBlocks == 0} takes the image's size. A larger image keeps its size (it may have been
     * grown through another gateway). Throws {@link BdevException} saying which step failed and why.
     */
    public static RbdBdev open(String name, int blockSize, long numBlocks, Options o) {
        RbdNative.ensureLoaded(name);
        String what = "rbd bdev " + name + ": ";
        Conn c = connect(what, blockSize, numBlocks, o);
        try {
            long bytes = RbdNative.size(c.image);
            if (bytes < 0) {
                throw new BdevException(what + "cannot read the size of " + o.pool() + "/" + o.image() + ": "
                    + RbdNative.strerror((int) bytes));
            }
            if (bytes < numBlocks * blockSize) {
                int rc = RbdNative.resize(c.image, numBlocks * blockSize);
                if (rc < 0) {
                    throw new BdevException(what + "cannot grow " + o.pool() + "/" + o.image() + " to "
                        + numBlocks * blockSize + " bytes: " + RbdNative.strerror(rc));
                }
                bytes = numBlocks * blockSize;
            }
            if (bytes / blockSize == 0) {
                throw new BdevException(what + "image " + o.pool() + "/" + o.image() + " has " + bytes
                    + " bytes, less than one block of " + blockSize);
            }
            RbdBdev b = new RbdBdev(name, blockSize, bytes / blockSize, o, c);
            LOG.info("rbd bdev {}: {}/{} as {}, {} blocks of {} bytes", name, o.pool(), o.image(), o.clientName(),
                bytes / blockSize, blockSize);
            return b;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** A new client of the cluster with the pool and the image open (created when asked and absent). */
    private static Conn connect(String what, int blockSize, long numBlocks, Options o) {
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
            return new Conn(cluster, ioctx, openOrCreate(what, ioctx, blockSize, numBlocks, o));
        } catch (RuntimeException e) {
            if (ioctx > 0) {
                RbdNative.closePool(ioctx);
            }
            RbdNative.shutdown(cluster);
            throw e;
        }
    }

    private static long openOrCreate(String what, long ioctx, int blockSize, long numBlocks, Options o) {
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

    private static synchronized int register(RbdBdev b) {
        RbdBdev[] r = registry;
        for (int i = 0; i < r.length; i++) {
            if (r[i] == null) {
                RbdBdev[] next = r.clone();
                next[i] = b;
                registry = next;
                return i;
            }
        }
        RbdBdev[] next = java.util.Arrays.copyOf(r, r.length + 1);
        next[r.length] = b;
        registry = next;
        return r.length;
    }

    private static synchronized void unregister(int index) {
        RbdBdev[] next = registry.clone();
        next[index] = null;
        registry = next;
    }

    /** A request ended in librbd (on a librbd thread). */
    static void completed(long tag, long rc) {
        RbdBdev[] r = registry;
        int i = (int) (tag >>> 32);
        RbdBdev b = i < r.length ? r[i] : null;
        if (b == null) {
            LOG.error("rbd: a completion for a closed device (tag {})", tag);
            return;
        }
        b.onCompleted((int) tag, tag, rc);
    }

    public Options options() {
        return options;
    }

    // ------------------------------------------------------------------ state kept with the image

    /** The value of the image's metadata {@code key}, or null when it has none. */
    public byte[] metadata(String key) throws java.io.IOException {
        return metadata(key, 4096);
    }

    private byte[] metadata(String key, int size) throws java.io.IOException {
        byte[] out = new byte[size];
        int n = withConn(c -> RbdNative.metadataGet(c.ioctx, headerOid(), key, out));
        if (n == -RbdNative.ENOENT) {
            return null;
        }
        if (n == -RbdNative.ERANGE && size < (1 << 24)) {
            return metadata(key, size * 4);
        }
        if (n < 0) {
            throw ioFailure("read metadata " + key + " of", n);
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /**
     * Sets the image's metadata {@code key} to {@code value} if it is still {@code expected} (null: the key is
     * absent), atomically on the OSD (compare and set in one operation on the header object): true, or false when
     * another client changed it since it was read. Does not notify: see {@link #notifyHeader}.
     */
    public boolean compareAndSetMetadata(String key, byte[] expected, byte[] value) throws java.io.IOException {
        if (value.length == 0) {
            throw new IllegalArgumentException("an empty value cannot be told from an absent one");
        }
        int rc = withConn(c -> RbdNative.metadataCas(c.ioctx, headerOid(), key, expected, value));
        if (rc == -RbdNative.ECANCELED) {
            return false;
        }
        if (rc < 0) {
            throw ioFailure("write metadata " + key + " of", rc);
        }
        return true;
    }

    /** Why a {@link HeaderListener} is told: a notification, a watch made again, or a new client after a blocklist. */
    public enum HeaderEvent {
        /** Another client notified the header; the notifier waits for {@code done}. */
        NOTIFIED,
        /** The watch broke and was made again: notifications may have been missed meanwhile. */
        WATCHED_AGAIN,
        /**
         * This client was blocklisted and a new one serves the image: notifications were missed, and requests that
         * passed the layers above while the old client was cut off must be drained before I/O is let through again
         * (the device stays fenced until {@code done}).
         */
        RECONNECTED
    }

    /** Takes in a change of what is kept in the image's header. */
    @FunctionalInterface
    public interface HeaderListener {
        /** Calls {@code done} exactly once, on any thread, when this gateway has taken the change in. */
        void headerChanged(HeaderEvent event, Runnable done);
    }

    /** A watch of the image's header: the client that holds it, and its address (null: not listed any more). */
    public record Watcher(long clientId, String address) {
    }

    /**
     * Notifies every client watching the image's header (other gateways' {@link #watchHeader} listeners, and
     * librbd, which takes it as a header update) and waits until each has acknowledged, up to {@code timeoutMs}:
     * the watchers (other than this client) that did not, with the address each had when the watchers were listed
     * just before the notification (or just after, for one that came meanwhile). Empty: every one acknowledged.
     */
    public java.util.List<Watcher> notifyHeader(int timeoutMs) throws java.io.IOException {
        java.util.Map<Long, String> listed = watcherAddresses();
        long[] late = new long[2 * WATCHERS_MAX];
        int n = withConn(c -> RbdNative.notify(c.ioctx, headerOid(), timeoutMs, late));
        if (n < 0) {
            throw ioFailure(n == -RbdNative.ETIMEDOUT ? "tell which watchers did not answer a notification of"
                : "notify the header of", n);
        }
        if (n > WATCHERS_MAX) {
            throw new java.io.IOException("rbd bdev " + name() + ": " + n + " watches of " + options.pool() + "/"
                + options.image() + " did not answer, more than the " + WATCHERS_MAX + " this gateway can fence");
        }
        long me = clientId();
        java.util.Map<Long, Watcher> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            long id = late[2 * i];
            if (id == me || out.containsKey(id)) {
                continue; // this client answers its own notifications at once; a client with two watches is one
            }
            if (!listed.containsKey(id)) {
                listed.putAll(watcherAddresses());
            }
            out.put(id, new Watcher(id, listed.get(id)));
        }
        return java.util.List.copyOf(out.values());
    }

    /** How many watchers of the header (and late answers to a notification) this gateway handles at most. */
    private static final int WATCHERS_MAX = 64;

    /** The watchers of the image's header by client id: their addresses. */
    private java.util.Map<Long, String> watcherAddresses() throws java.io.IOException {
        long[] ids = new long[WATCHERS_MAX];
        String[] addrs = new String[WATCHERS_MAX];
        int n = withConn(c -> RbdNative.watchers(c.image, ids, addrs));
        if (n < 0) {
            throw ioFailure("list the watchers of", n);
        }
        java.util.Map<Long, String> m = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            m.put(ids[i], addrs[i]);
        }
        return m;
    }

    /** This gateway's client id ({@code client.<id>}) on the cluster now. */
    public long clientId() throws java.io.IOException {
        return withConnLong(c -> RbdNative.instanceId(c.cluster));
    }

    /**
     * Fences {@code w}'s client off the cluster: Ceph blocklists its address, so the OSDs refuse every operation of
     * it, including those it sent before; returns once this client has the OSD map that lists it. Blocking (a
     * monitor command), bounded by the bdev's timeout.
     */
    public void blocklist(Watcher w) throws java.io.IOException {
        if (w.address() == null || w.address().isEmpty()) {
            throw new java.io.IOException("rbd bdev " + name() + ": client." + w.clientId() + " no longer watches "
                + options.pool() + "/" + options.image() + ", so its address is not known and it cannot be fenced");
        }
        int rc = withConn(c -> RbdNative.blocklist(c.cluster, w.address()));
        if (rc < 0) {
            throw ioFailure("blocklist client." + w.clientId() + " at " + w.address() + ", a watcher of", rc);
        }
        LOG.warn("rbd bdev {}: blocklisted client.{} at {}, a watcher of {}/{} that did not answer", name(),
            w.clientId(), w.address(), options.pool(), options.image());
    }

    /**
     * Waits until the writes librbd acknowledged on this client are on the OSDs (rbd_flush; with librbd's write-around
     * cache a write completes before it is). Blocking; not on a librados callback thread.
     */
    public void flushAcknowledged() throws java.io.IOException {
        int rc = withConn(c -> RbdNative.flush(c.image));
        if (rc < 0 && rc != -RbdNative.EROFS) {
            throw ioFailure("flush", rc);
        }
    }

    /**
     * Takes RBD snapshot {@code snapshot} of the image on this client's handle (which owns the exclusive lock while
     * it writes, so librbd need not ask another owner). The caller held and drained the writes.
     */
    public void createSnapshot(String snapshot) throws java.io.IOException {
        int rc = withConn(c -> RbdNative.snapCreate(c.image, snapshot));
        if (rc < 0) {
            throw ioFailure("take snapshot " + snapshot + " of", rc);
        }
    }

    /** Removes RBD snapshot {@code snapshot} of the image (one that is not there is removed already). */
    public void removeSnapshot(String snapshot) throws java.io.IOException {
        int rc = withConn(c -> RbdNative.snapRemove(c.image, snapshot));
        if (rc < 0 && rc != -RbdNative.ENOENT) {
            throw ioFailure("remove snapshot " + snapshot + " of", rc);
        }
    }

    /**
     * Calls {@code listener} whenever another client notifies the image's header (before that client's notify
     * returns: it waits for the listener's {@code done}), after the watch was made again, and after a reconnect
     * (blocklisted). Watches the header from the first listener on.
     */
    public void watchHeader(HeaderListener listener) throws java.io.IOException {
        headerListeners.add(listener);
        synchronized (control) {
            if (watch == 0 && !isClosed()) {
                long w = withConnLong(c -> watchOn(c));
                if (w < 0) {
                    headerListeners.remove(listener);
                    throw ioFailure("watch the header of", (int) w);
                }
                watch = w;
            }
        }
    }

    /**
     * Whether another client watches the image's header now: another gateway serving it (or any client that has the
     * image open; librbd watches the header of every open image). A client that died keeps its watch until Ceph
     * times it out ({@code osd_client_watch_timeout}, 30 s by default).
     */
    public boolean watchedByOthers() throws java.io.IOException {
        int n = withConn(c -> RbdNative.otherWatchers(c.cluster, c.image));
        if (n < 0) {
            throw ioFailure("list the watchers of", n);
        }
        return n > 0;
    }

    public void unwatchHeader(HeaderListener listener) {
        headerListeners.remove(listener);
    }

    /** A control call on the current connection, which no reconnect replaces meanwhile. */
    @FunctionalInterface
    private interface ConnCall {
        long call(Conn c) throws java.io.IOException;
    }

    /**
     * Runs {@code call}, which returns a status (0, a count or -errno), on the current connection (read half of
     * connLock); a blocklisted result starts recovery. Calls that return a handle use {@link #withConnLong}.
     */
    private int withConn(ConnCall call) throws java.io.IOException {
        long rc = withConnLong(call);
        if (rc != (int) rc) {
            throw new IllegalStateException("rbd bdev " + name() + ": a handle where a status was expected");
        }
        return (int) rc;
    }

    private long withConnLong(ConnCall call) throws java.io.IOException {
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

    private java.io.IOException ioFailure(String what, int rc) {
        return new java.io.IOException("rbd bdev " + name() + ": cannot " + what + " " + options.pool() + "/"
            + options.image() + ": " + RbdNative.strerror(rc)
            + (rc == -RbdNative.ESHUTDOWN ? " (this client was blocklisted; reconnecting)" : ""));
    }

    private String headerOid() throws java.io.IOException {
        String known = headerOid;
        if (known != null) {
            return known;
        }
        synchronized (control) {
            if (headerOid == null) {
                byte[] out = new byte[128];
                int n = RbdNative.headerOid(conn.image, out);
                if (n < 0) {
                    throw ioFailure("read the id of", n);
                }
                headerOid = new String(out, 0, n, java.nio.charset.StandardCharsets.US_ASCII);
            }
            return headerOid;
        }
    }

    /** This device's index: the tag of its requests' and its header watch's callbacks ({@link #headerUpdated}). */
    int index() {
        return index;
    }

    /**
     * The header of the device with index {@code tag} was notified (a librados thread): true when every listener has
     * taken it in already (the library acknowledges it now), false when the last one to finish acknowledges it.
     */
    static boolean headerUpdated(long tag, int err, long handle, long notifyId) {
        RbdBdev[] r = registry;
        RbdBdev b = tag < r.length ? r[(int) tag] : null;
        return b == null || b.onHeaderUpdated(err, handle, notifyId);
    }

    private boolean onHeaderUpdated(int err, long handle, long notifyId) {
        if (err < 0) {
            if (!fenced) {
                LOG.warn("rbd bdev {}: the watch of {}/{} broke ({}); watching again", name(), options.pool(),
                    options.image(), RbdNative.strerror(err));
                Thread t = new Thread(this::rewatch, "rbd-rewatch-" + name());
                t.setDaemon(true);
                t.start();
            }
            return true;
        }
        // the callback holds one count itself: while it runs, no listener's done can bring the count to zero
        java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger(1);
        tellHeaderListeners(HeaderEvent.NOTIFIED, pending, () -> ackLater(handle, notifyId));
        return pending.decrementAndGet() == 0;
    }

    /**
     * Tells every listener of {@code event}; {@code pending} counts the listeners not done (plus the caller's own
     * count), and whoever brings it to zero runs {@code allDone} (the caller, when it does, runs nothing more).
     */
    private void tellHeaderListeners(HeaderEvent event, java.util.concurrent.atomic.AtomicInteger pending,
                                     Runnable allDone) {
        for (HeaderListener l : headerListeners) {
            pending.incrementAndGet();
            java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
            Runnable done = () -> {
                if (once.compareAndSet(false, true) && pending.decrementAndGet() == 0) {
                    allDone.run();
                }
            };
            try {
                l.headerChanged(event, done);
            } catch (RuntimeException e) {
                LOG.error("rbd bdev {}: a header listener failed", name(), e);
                done.run();
            }
        }
    }

    /** Tells every listener of {@code event} and waits until each is done (the reconnect thread). */
    private void awaitHeaderListeners(HeaderEvent event) {
        java.util.concurrent.CountDownLatch latch = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger(1);
        tellHeaderListeners(event, pending, latch::countDown);
        if (pending.decrementAndGet() == 0) {
            return;
        }
        boolean interrupted = false;
        try {
            while (!latch.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
                LOG.warn("rbd bdev {}: still draining the commands that passed while the client was blocklisted",
                    name());
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Acknowledges notification {@code notifyId} on watch {@code handle} unless that watch ended meanwhile. */
    private void ackLater(long handle, long notifyId) {
        synchronized (control) {
            if (watch != handle) {
                return; // the watch was made again or ended: the notifier hears of it as a timeout
            }
            int rc = RbdNative.notifyAck(handle, notifyId);
            if (rc < 0) {
                LOG.warn("rbd bdev {}: cannot acknowledge a notification of {}/{}: {}", name(), options.pool(),
                    options.image(), RbdNative.strerror(rc));
            }
        }
    }

    /** First wait before a failed re-watch is tried again; it doubles up to {@link #REWATCH_MAX_DELAY_MS}. */
    static final long REWATCH_FIRST_DELAY_MS = 100;
    static final long REWATCH_MAX_DELAY_MS = 5_000;
    /**
     * How long the header may stay unwatched before that is logged as an error: Ceph's {@code osd_client_watch_timeout}
     * (30 s), the time another gateway's notify waits for a dead watcher; past it this gateway misses changes.
     */
    static final long REWATCH_ERROR_AFTER_MS = 30_000;

    /**
     * Makes a broken watch again (its own thread: a watch cannot end inside its own callback). A failed attempt is
     * tried again after 100 ms, doubling up to 5 s, until it succeeds or the device is closed or fenced (the
     * reconnect then watches on the new client); each failure is counted ({@link #rewatchFailuresTotal}), the first
     * logged as a warning and, once the header has gone unwatched for 30 s, as an error: changes other gateways make
     * (reservations) are not seen meanwhile.
     */
    private void rewatch() {
        synchronized (control) {
            if (isClosed() || watch == 0 || fenced) {
                return;
            }
            RbdNative.unwatch(watch);
            watch = 0;
        }
        long start = System.nanoTime();
        long delay = REWATCH_FIRST_DELAY_MS;
        boolean errorLogged = false;
        for (int attempt = 1; ; attempt++) {
            String failure;
            synchronized (control) {
                if (isClosed() || fenced || watch != 0) {
                    return;
                }
                failure = watchAgain();
                if (failure == null) {
                    if (attempt > 1) {
                        LOG.info("rbd bdev {}: watches the header of {}/{} again (attempt {}, {} ms after the break)",
                            name(), options.pool(), options.image(), attempt,
                            java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                    }
                    // changes may have been missed while the watch was down
                    tellHeaderListeners(HeaderEvent.WATCHED_AGAIN, new java.util.concurrent.atomic.AtomicInteger(1),
                        () -> { });
                    return;
                }
            }
            REWATCH_FAILURES.increment();
            long down = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            if (!errorLogged && down >= REWATCH_ERROR_AFTER_MS) {
                errorLogged = true;
                LOG.error("rbd bdev {}: the header of {}/{} has not been watched for {} ms ({} attempts, last: {}); "
                    + "changes other gateways make are not seen until it is; still trying every {} ms", name(),
                    options.pool(), options.image(), down, attempt, failure, REWATCH_MAX_DELAY_MS);
            } else if (attempt == 1) {
                LOG.warn("rbd bdev {}: cannot watch the header of {}/{} again: {}; retrying", name(), options.pool(),
                    options.image(), failure);
            }
            if (!sleep(delay)) {
                return;
            }
            delay = Math.min(REWATCH_MAX_DELAY_MS, delay * 2);
        }
    }

    /** One attempt to watch the header (under control): null, or why it failed. */
    private String watchAgain() {
        try {
            long w = withConnLong(c -> watchOn(c));
            if (w < 0) {
                return RbdNative.strerror((int) w);
            }
            watch = w;
            return null;
        } catch (java.io.IOException e) {
            return e.getMessage();
        }
    }

    /** Failed attempts of every rbd bdev of this process to watch its header again after the watch broke. */
    public static long rewatchFailuresTotal() {
        return REWATCH_FAILURES.sum();
    }

    /** Whether the header is watched now (false while a broken watch has not been made again). */
    public boolean headerWatched() {
        synchronized (control) {
            return watch != 0;
        }
    }

    // ------------------------------------------------------------------ blocklisted: fence and reconnect

    /** Tells {@code listener} (on the reconnect thread) when the device is fenced and when it serves again. */
    public void onHealth(java.util.function.Consumer<Health> listener) {
        health = listener;
    }

    /** Whether the device is blocklisted and not reconnected yet (its I/O ends with ANA Inaccessible). */
    public boolean isFenced() {
        return fenced;
    }

    /** How often this device's client was found blocklisted. */
    public long blocklistedCount() {
        return blocklistedCount.sum();
    }

    /** Blocklist events of every rbd bdev of this process since it started. */
    public static long blocklistedTotal() {
        return BLOCKLISTED.sum();
    }

    /** Reconnects after a blocklist of every rbd bdev of this process since it started. */
    public static long reconnectedTotal() {
        return RECONNECTED.sum();
    }

    /** {@code what} failed with ESHUTDOWN: this client was blocklisted; fence the device and reconnect (once). */
    private void blocklisted(String what) {
        synchronized (this) {
            if (fenced || closed) {
                return;
            }
            fenced = true;
        }
        lockHeld = false;
        blocklistedCount.increment();
        BLOCKLISTED.increment();
        LOG.error("rbd bdev {}: Ceph blocklisted this gateway's client of {}/{} ({} failed with ESHUTDOWN; another"
            + " gateway broke its exclusive lock?): its I/O ends with ANA Inaccessible while it reconnects as a new"
            + " client", name(), options.pool(), options.image(), what);
        Thread t = new Thread(this::reconnect, "rbd-reconnect-" + name());
        t.setDaemon(true);
        t.start();
    }

    /**
     * A write was refused with EROFS although this gateway took the exclusive lock: either the lock was broken and
     * this client blocklisted, or it lost the lock otherwise. A read of the header tells (ESHUTDOWN: blocklisted);
     * on its own thread, one at a time.
     */
    private void suspectBlocklisted() {
        if (fenced || !probing.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                int rc = withConn(c -> RbdNative.metadataGet(c.ioctx, headerOid(), "nvmf4j.probe", new byte[8]));
                if (rc != -RbdNative.ESHUTDOWN) {
                    LOG.warn("rbd bdev {}: a write was refused (EROFS) while this gateway held the exclusive lock of"
                        + " {}/{}, but its client is not blocklisted", name(), options.pool(), options.image());
                }
            } catch (java.io.IOException e) {
                LOG.warn("rbd bdev {}: {}", name(), e.getMessage());
            } finally {
                probing.set(false);
            }
        }, "rbd-probe-" + name());
        t.setDaemon(true);
        t.start();
    }

    /**
     * The reconnect thread: tells the control plane (FENCED), makes a new client and opens the image (again after
     * 1 s, doubling up to 30 s, while that fails), swaps it in, watches the header again, tells the control plane
     * (RECOVERED) and the header listeners (what is kept in the image may have changed meanwhile), and closes the
     * old client once the requests still on it have ended.
     */
    private void reconnect() {
        long started = System.nanoTime();
        tellHealth(Health.FENCED);
        long delay = RECONNECT_FIRST_MS;
        String what = "rbd bdev " + name() + ": ";
        while (!isClosed()) {
            Conn fresh;
            try {
                fresh = connect(what, blockSize(), 0, options);
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
            awaitHeaderListeners(HeaderEvent.RECONNECTED);
            synchronized (this) {
                fenced = false;
            }
            RECONNECTED.increment();
            LOG.info("{}serves {}/{} again as a new client, {} ms after it was blocklisted (without the exclusive"
                + " lock)", what, options.pool(), options.image(), (System.nanoTime() - started) / 1_000_000);
            tellHealth(Health.RECOVERED);
            retire(old); // after: closing a blocklisted client may take its time
            LOG.info("{}closed the blocklisted client", what);
            return;
        }
    }

    /** Whether this client watches the image's header now (another gateway's notifications reach it). */
    public boolean watchesHeader() {
        synchronized (control) {
            return watch != 0;
        }
    }

    /** rados_watch2 of the header on {@code c}, remembered as the watch's connection: the handle or -errno. Under control. */
    private long watchOn(Conn c) throws java.io.IOException {
        long w = RbdNative.watch(c.ioctx, headerOid(), index);
        if (w > 0) {
            watchConn = c;
        }
        return w;
    }

    /** Puts {@code fresh} in place of the current connection and watches the header on it; the old one, or null. */
    private Conn swap(Conn fresh) {
        long oldWatch;
        synchronized (control) {
            if (isClosed()) {
                return null;
            }
            oldWatch = watch;
            watch = 0;
        }
        if (oldWatch != 0) {
            RbdNative.unwatch(oldWatch); // fails on a blocklisted client; frees the watch and waits for its callbacks
        }
        // the header is watched on the new client whenever anyone listens: the watch's break, seen first, may have
        // ended the old watch already (rewatch), so "there was a watch" is no sign of whether one is wanted
        boolean watchAgain = oldWatch != 0 || !headerListeners.isEmpty();
        Conn old;
        connLock.writeLock().lock();
        try {
            synchronized (this) {
                if (closed) {
                    return null; // close() closes the current one
                }
                old = conn;
                conn = fresh;
            }
        } finally {
            connLock.writeLock().unlock();
        }
        synchronized (control) {
            if (watch != 0 && watchConn != fresh) {
                // made on the old client between the two steps above (a first header listener): the old client is
                // retired next, and a watch must end before its ioctx does (else its unwatch reads freed memory)
                RbdNative.unwatch(watch);
                watch = 0;
                watchAgain = true;
            }
            if (watchAgain && watch == 0 && !isClosed()) {
                try {
                    long w = watchOn(fresh);
                    if (w < 0) {
                        LOG.error("rbd bdev {}: cannot watch the header on the new client: {}", name(),
                            RbdNative.strerror((int) w));
                    } else {
                        watch = w;
                    }
                } catch (java.io.IOException e) {
                    LOG.error("rbd bdev {}: {}", name(), e.getMessage());
                }
            }
        }
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
                        LOG.warn("rbd bdev {}: {} requests still on the blocklisted client", name(), old.outstanding);
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

    private void tellHealth(Health h) {
        try {
            health.accept(h);
        } catch (RuntimeException e) {
            LOG.error("rbd bdev {}: the control plane's health listener failed", name(), e);
        }
    }

    private static boolean sleep(long ms) {
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ------------------------------------------------------------------ the exclusive lock

    /**
     * Takes the image's exclusive lock and keeps it (librbd hands it to no other client until
     * {@link #releaseExclusiveLock()}: their writes fail with EROFS). Only by asking: a client that holds it
     * automatically (it wrote last) hands it over, and librbd itself breaks the lock of an owner that no longer
     * watches the image (dead, or its watch timed out). An owner that answers and keeps the lock explicitly (another
     * gateway that is optimized), or that does not answer but still watches the image (alive but slow, or stopped
     * for less than Ceph's {@code osd_client_watch_timeout}), is never broken: {@link LockHeldElsewhere}, and the
     * lock stays where it is. Breaking a live owner's lock would blocklist it, and Ceph would drop the writes it has
     * acknowledged but not yet sent. Blocking; for the control path.
     */
    public void acquireExclusiveLock() throws java.io.IOException {
        synchronized (control) {
            if (fenced) {
                throw lockFailure("take", -RbdNative.ESHUTDOWN);
            }
            int rc = withConn(c -> RbdNative.lockAcquire(c.image));
            if (rc == 0) {
                lockHeld = true;
                LOG.info("rbd bdev {}: holds the exclusive lock of {}/{}", name(), options.pool(), options.image());
                return;
            }
            if (rc == -RbdNative.EROFS) {
                throw new LockHeldElsewhere("rbd bdev " + name() + ": another gateway holds the exclusive lock of "
                    + options.pool() + "/" + options.image() + " and keeps it (it answers): not broken; make that"
                    + " gateway non-optimized first");
            }
            if (rc != -RbdNative.EBUSY && rc != -RbdNative.ETIMEDOUT) {
                throw lockFailure("take", rc); // no exclusive-lock feature (EINVAL), blocklisted, ...: nothing to break
            }
            if (watchedByOthers()) {
                throw new LockHeldElsewhere("rbd bdev " + name() + ": the owner of the exclusive lock of "
                    + options.pool() + "/" + options.image() + " did not hand it over (" + RbdNative.strerror(rc)
                    + ") but still watches the image (alive): not broken; Ceph drops a dead client's watch after"
                    + " osd_client_watch_timeout (30 s), librbd then breaks its lock itself");
            }
            LOG.warn("rbd bdev {}: the owner of the exclusive lock of {}/{} did not hand it over ({}) and no longer"
                + " watches the image; breaking its lock (Ceph blocklists it)", name(), options.pool(),
                options.image(), RbdNative.strerror(rc));
            int broken = withConn(c -> RbdNative.lockBreakOthers(c.image));
            if (broken < 0) {
                throw lockFailure("break the previous owner's", broken);
            }
            rc = withConn(c -> RbdNative.lockAcquire(c.image));
            if (rc < 0) {
                throw lockFailure("take", rc);
            }
            lockHeld = true;
            LOG.info("rbd bdev {}: holds the exclusive lock of {}/{} (broke {} other owner(s))", name(),
                options.pool(), options.image(), broken);
        }
    }

    /** The exclusive lock is another live gateway's: it was not taken, and not broken. */
    public static final class LockHeldElsewhere extends java.io.IOException {
        LockHeldElsewhere(String message) {
            super(message);
        }
    }

    /** Gives the exclusive lock up (a no-op when not held, and while blocklisted: the client holds nothing then). */
    public void releaseExclusiveLock() throws java.io.IOException {
        synchronized (control) {
            lockHeld = false;
            if (fenced || withConn(c -> RbdNative.lockOwned(c.image)) != 1) {
                return;
            }
            int rc = withConn(c -> RbdNative.lockRelease(c.image));
            if (rc < 0) {
                throw lockFailure("release", rc);
            }
            LOG.info("rbd bdev {}: released the exclusive lock of {}/{}", name(), options.pool(), options.image());
        }
    }

    /** Whether this client owns the image's exclusive lock now. */
    public boolean ownsExclusiveLock() throws java.io.IOException {
        int rc = withConn(c -> RbdNative.lockOwned(c.image));
        if (rc < 0) {
            throw lockFailure("query", rc);
        }
        return rc == 1;
    }

    private java.io.IOException lockFailure(String what, int rc) {
        return ioFailure(what + " the exclusive lock of", rc);
    }

    @Override
    public boolean persistent() {
        return true;
    }

    /** librbd's cache, when on: without it every write is on the OSDs when librbd completes it. */
    @Override
    public boolean volatileCache() {
        return cache;
    }

    @Override
    public boolean writeCacheEnabled() {
        return cache && writeCache;
    }

    @Override
    public void setWriteCacheEnabled(boolean enabled) {
        writeCache = enabled;
    }

    /** Whether {@code io} needs an {@code rbd_aio_flush} before it completes: with the cache on, FUA or WCE off. */
    private boolean flushAfter(BdevIo io) {
        return cache && (io.fua() || !writeCache);
    }

    @Override
    public DiscardLimits discardLimits() {
        return limits;
    }

    @Override
    public void read(BdevIo io) {
        submit(io, OP_READ);
    }

    @Override
    public void write(BdevIo io) {
        submit(io, flushAfter(io) ? OP_WRITE | THEN_FLUSH : OP_WRITE);
    }

    @Override
    public void flush(BdevIo io) {
        submit(io, OP_FLUSH);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        submit(io, flushAfter(io) ? OP_WRITE_ZEROES | THEN_FLUSH : OP_WRITE_ZEROES);
    }

    @Override
    public void deallocate(BdevIo io) {
        submit(io, flushAfter(io) ? OP_DEALLOCATE | THEN_FLUSH : OP_DEALLOCATE);
    }

    /** Takes a slot and hands {@code io} to librbd; a refused submission completes at once. */
    private void submit(BdevIo io, int op) {
        int kind = op & OP_MASK;
        if (io.offset() < 0 || io.length() < 0 || io.offset() + io.length() > numBlocks() * blockSize()) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        long address = 0;
        if (kind == OP_READ || kind == OP_WRITE) {
            ByteBuf b = io.buffer();
            if (!b.hasMemoryAddress()) {
                LOG.warn("rbd bdev {}: a buffer without a native address", name());
                io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
                return;
            }
            address = b.memoryAddress();
        }
        int slot = take(io, op);
        if (slot < 0) {
            io.bdevComplete(slot == FENCED ? NvmeStatus.ANA_INACCESSIBLE : NvmeStatus.ABORTED_SQ_DELETION);
            return;
        }
        long image = connOf(slot).image;
        long tag = ((long) index << 32) | slot;
        int rc = switch (kind) {
            case OP_READ -> RbdNative.aioRead(image, tag, io.offset(), io.length(), address);
            case OP_WRITE -> RbdNative.aioWrite(image, tag, io.offset(), io.length(), address);
            case OP_FLUSH -> {
                flushes.increment();
                yield RbdNative.aioFlush(image, tag);
            }
            case OP_WRITE_ZEROES -> RbdNative.aioWriteZeroes(image, tag, io.offset(), io.length());
            default -> RbdNative.aioDiscard(image, tag, io.offset(), io.length());
        };
        if (rc < 0) {
            release(slot);
            io.bdevComplete(failed(kind, rc, io));
        }
    }

    /** The connection the request in {@code slot} went to. */
    private synchronized Conn connOf(int slot) {
        return conns[slot];
    }

    /** librbd ended the request in {@code slot}: a flush follows where asked, else the submitter hears of it. */
    private void onCompleted(int slot, long tag, long rc) {
        BdevIo io;
        int op;
        long image;
        synchronized (this) {
            io = ios[slot];
            op = ops[slot];
            image = conns[slot].image;
            if (rc >= 0 && (op & THEN_FLUSH) != 0) {
                ops[slot] = (op & ~THEN_FLUSH) | FLUSHING;
            }
        }
        int kind = op & OP_MASK;
        if (rc >= 0 && (op & THEN_FLUSH) != 0) {
            flushes.increment();
            int f = RbdNative.aioFlush(image, tag); // on the connection the write went to
            if (f >= 0) {
                return; // completes when the flush does
            }
            rc = f;
        }
        release(slot);
        io.bdevCompleteAsync(rc < 0 ? failed((op & FLUSHING) != 0 ? OP_FLUSH : kind, (int) rc, io) : NvmeStatus.SUCCESS);
    }

    /**
     * The status of a failed operation: {@link BdevErrors#status} but for what only librbd's exclusive lock and
     * Ceph's blocklist cause. EROFS: another client keeps the lock (the optimized gateway, see
     * acquireExclusiveLock), so this path cannot write now: Asymmetric Access Transition, a path error the host
     * retries on another path (and, when this gateway thought it held the lock, a check whether it was
     * blocklisted). ESHUTDOWN: this client was blocklisted (another gateway broke its lock): the device is fenced
     * and reconnects; a read or write that did not land ends with Asymmetric Access Inaccessible (the host sends it
     * through another path); a flush ends with Internal Error and DNR, because writes this client's cache had
     * acknowledged may never have reached the OSDs, and a host that resent the flush elsewhere would take them
     * for durable.
     */
    private int failed(int kind, int rc, BdevIo io) {
        LOG.warn("rbd bdev {}: {} of {} bytes at {} failed: {}", name(), opName(kind), io.length(), io.offset(),
            RbdNative.strerror(rc));
        switch (-rc) {
            case RbdNative.EROFS -> {
                if (lockHeld) {
                    suspectBlocklisted();
                }
                return NvmeStatus.ANA_TRANSITION;
            }
            case RbdNative.ESHUTDOWN -> {
                blocklisted("a " + opName(kind));
                return kind == OP_FLUSH ? NvmeStatus.DNR | NvmeStatus.INTERNAL_ERROR : NvmeStatus.ANA_INACCESSIBLE;
            }
            default -> {
                return BdevErrors.status(kind, rc);
            }
        }
    }

    private static String opName(int kind) {
        return switch (kind) {
            case OP_READ -> "read";
            case OP_WRITE -> "write";
            case OP_FLUSH -> "flush";
            case OP_WRITE_ZEROES -> "write zeroes";
            default -> "deallocate";
        };
    }

    /** {@link #take}: the device is fenced (blocklisted, reconnecting). */
    private static final int FENCED = -2;

    /** A free slot holding {@code io}, {@code op} and the current connection; -1 once closed, FENCED while fenced. */
    private synchronized int take(BdevIo io, int op) {
        if (closed) {
            return -1;
        }
        if (fenced) {
            return FENCED;
        }
        if (freeCount == 0) {
            growSlots();
        }
        int slot = free[--freeCount];
        ios[slot] = io;
        ops[slot] = op;
        Conn c = conn;
        conns[slot] = c;
        c.outstanding++;
        outstanding++;
        return slot;
    }

    private synchronized void release(int slot) {
        ios[slot] = null;
        Conn c = conns[slot];
        conns[slot] = null;
        c.outstanding--;
        free[freeCount++] = slot;
        outstanding--;
        if ((closed && outstanding == 0) || (c != conn && c.outstanding == 0)) {
            notifyAll();
        }
    }

    /** Doubles the slot table (more requests outstanding than ever before; not per I/O). */
    private void growSlots() {
        int n = ios.length;
        ios = java.util.Arrays.copyOf(ios, n * 2);
        ops = java.util.Arrays.copyOf(ops, n * 2);
        conns = java.util.Arrays.copyOf(conns, n * 2);
        free = new int[n * 2];
        for (int i = 0; i < n; i++) {
            free[i] = n * 2 - 1 - i;
        }
        freeCount = n;
        LOG.info("rbd bdev {}: more than {} requests outstanding; the table grows to {}", name(), n, n * 2);
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /** Flushes this device handed to librbd (Flush, and after each durable write, Write Zeroes or Deallocate). */
    public long flushes() {
        return flushes.sum();
    }

    /** Requests in librbd now. */
    public synchronized int outstanding() {
        return outstanding;
    }

    @Override
    public void grow(long newNumBlocks) {
        long bytes = newNumBlocks * blockSize();
        try {
            synchronized (control) {
                long size = withConnLong(c -> RbdNative.size(c.image));
                if (size < 0) {
                    throw new BdevException("rbd bdev " + name() + ": cannot read the image's size: "
                        + RbdNative.strerror((int) size));
                }
                if (size < bytes) {
                    int rc = withConn(c -> RbdNative.resize(c.image, bytes));
                    if (rc < 0) {
                        throw new BdevException("rbd bdev " + name() + ": cannot grow " + options.pool() + "/"
                            + options.image() + " to " + bytes + " bytes: " + RbdNative.strerror(rc));
                    }
                }
                setNumBlocks(newNumBlocks);
            }
        } catch (java.io.IOException e) {
            throw new BdevException(e.getMessage());
        }
    }

    /** Waits for every outstanding request, flushes librbd's cache, and closes image, pool and connection. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            boolean interrupted = false;
            while (outstanding > 0) {
                try {
                    wait(10_000);
                    if (outstanding > 0) {
                        LOG.warn("rbd bdev {}: still waiting for {} requests", name(), outstanding);
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (control) {
            if (watch != 0) {
                RbdNative.unwatch(watch);
                watch = 0;
            }
        }
        headerListeners.clear();
        connLock.writeLock().lock();
        Conn c = conn;
        try {
            int rc = RbdNative.flush(c.image);
            if (rc == -RbdNative.EROFS) {
                // another gateway keeps the exclusive lock: this one gave it up, and flushed its cache then
                LOG.info("rbd bdev {}: not the exclusive lock's owner at close; nothing of it is cached", name());
            } else if (rc < 0) {
                LOG.error("rbd bdev {}: the final flush of {}/{} failed: {}", name(), options.pool(), options.image(),
                    RbdNative.strerror(rc));
            }
        } finally {
            c.close();
            connLock.writeLock().unlock();
            unregister(index);
        }
    }
}
