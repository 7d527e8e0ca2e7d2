package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
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
 *
 * <p>Four parts, one job each: this class is the block device (the table of outstanding requests and the completion
 * path), {@link RbdConnection} the client of the cluster (control calls, blocklist detection, reconnect),
 * {@link RbdHeaderWatch} the state kept in the image's header (metadata, watch, notify, fencing other gateways), and
 * {@link RbdExclusiveLock} the image's exclusive lock.
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

    /** What a gateway's device tells the control plane: blocklisted and reconnecting, or serving again. */
    public enum Health { FENCED, RECOVERED }

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

    /** The exclusive lock is another live gateway's: it was not taken, and not broken. */
    public static final class LockHeldElsewhere extends java.io.IOException {
        LockHeldElsewhere(String message) {
            super(message);
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

    private final Options options;
    private final int index;
    private final RbdConnection connection;
    private final RbdHeaderWatch header;
    private final RbdExclusiveLock lock;
    private final DiscardLimits limits;
    /** Whether librbd's cache is on (Options#cache): the only volatile write cache this device has. */
    private final boolean cache;
    /** The host's Volatile Write Cache setting (Set Features 06h); matters only with {@link #cache}. */
    private volatile boolean writeCache;
    /** Flushes handed to librbd: Flush commands and those that follow a durable write, Write Zeroes or Deallocate. */
    private final java.util.concurrent.atomic.LongAdder flushes = new java.util.concurrent.atomic.LongAdder();
    /** Serializes {@link #grow}; never taken on the I/O path. */
    private final Object resizing = new Object();
    /** Whether {@link #grow} writes zeros over the range it adds (a thick volume's image, {@link #growThick}). */
    private volatile boolean growThick;
    /** A thin volume of an rbd pool ({@link #thinProvisioned(boolean)}): Identify reports its allocation. */
    private volatile boolean thin;
    /** The image's own allocated bytes as last read ({@link #readAllocation}); -1 until the first read. */
    private volatile long allocated = -1;
    /** When {@link #allocated} was last read ({@link System#nanoTime}). */
    private volatile long allocatedAt;
    /** A read of the allocation is queued or running on {@link #usage}. */
    private final java.util.concurrent.atomic.AtomicBoolean allocationPending =
        new java.util.concurrent.atomic.AtomicBoolean();
    /** The thread that reads the allocation from the cluster (a thin volume's only; never a poll group's). */
    private volatile java.util.concurrent.ExecutorService usage;
    // the outstanding requests: slot -> io, op and the connection it went to; free slots on a stack; guarded by this
    // (the connection counts them per connection: RbdConnection#enter, #leave)
    private BdevIo[] ios = new BdevIo[INITIAL_SLOTS];
    private int[] ops = new int[INITIAL_SLOTS];
    private RbdConnection.Conn[] conns = new RbdConnection.Conn[INITIAL_SLOTS];
    private int[] free = new int[INITIAL_SLOTS];
    private int freeCount;

    private RbdBdev(String name, int blockSize, long numBlocks, Options options, RbdConnection.Conn conn) {
        super(name, blockSize, numBlocks);
        this.options = options;
        this.cache = options.cache();
        this.writeCache = options.cache();
        this.limits = new DiscardLimits(true, true, true, true, 256, GIB / blockSize, 16 * GIB / blockSize);
        for (int i = 0; i < INITIAL_SLOTS; i++) {
            free[i] = INITIAL_SLOTS - 1 - i;
        }
        freeCount = INITIAL_SLOTS;
        this.connection = new RbdConnection(name, blockSize, options, conn, new RbdConnection.Reconnect() {
            @Override
            public void blocklisted() {
                lock.lost();
            }

            @Override
            public boolean leaveOldClient() {
                return header.leaveOldClient();
            }

            @Override
            public void joinNewClient(RbdConnection.Conn fresh, boolean watch) {
                header.joinNewClient(fresh, watch);
            }

            @Override
            public void drain() {
                header.awaitReconnected();
            }
        });
        this.index = register(this);
        this.header = new RbdHeaderWatch(name, options, connection, index);
        this.lock = new RbdExclusiveLock(name, options, connection, header);
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
        RbdConnection.Conn c = RbdConnection.connect(what, blockSize, numBlocks, o);
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

    /**
     * The header of the device with index {@code tag} was notified (a librados thread): true when every listener has
     * taken it in already (the library acknowledges it now), false when the last one to finish acknowledges it.
     */
    static boolean headerUpdated(long tag, int err, long handle, long notifyId) {
        RbdBdev[] r = registry;
        RbdBdev b = tag < r.length ? r[(int) tag] : null;
        // a callback that comes while the constructor runs (index registered, watch not yet made) cannot be for it
        return b == null || b.header == null || b.header.onHeaderUpdated(err, handle, notifyId);
    }

    /** This device's index: the tag of its requests' and its header watch's callbacks ({@link #headerUpdated}). */
    int index() {
        return index;
    }

    public Options options() {
        return options;
    }

    // ------------------------------------------------------------------ state kept with the image (RbdHeaderWatch)

    /** The value of the image's metadata {@code key}, or null when it has none. */
    public byte[] metadata(String key) throws java.io.IOException {
        return header.metadata(key);
    }

    /**
     * Sets the image's metadata {@code key} to {@code value} if it is still {@code expected} (null: the key is
     * absent), atomically on the OSD (compare and set in one operation on the header object): true, or false when
     * another client changed it since it was read. Does not notify: see {@link #notifyHeader}.
     */
    public boolean compareAndSetMetadata(String key, byte[] expected, byte[] value) throws java.io.IOException {
        return header.compareAndSetMetadata(key, expected, value);
    }

    /**
     * Notifies every client watching the image's header (other gateways' {@link #watchHeader} listeners, and
     * librbd, which takes it as a header update) and waits until each has acknowledged, up to {@code timeoutMs}:
     * the watchers (other than this client) that did not, with the address each had when the watchers were listed
     * just before the notification (or just after, for one that came meanwhile). Empty: every one acknowledged.
     */
    public java.util.List<Watcher> notifyHeader(int timeoutMs) throws java.io.IOException {
        return header.notifyHeader(timeoutMs);
    }

    /** This gateway's client id ({@code client.<id>}) on the cluster now. */
    public long clientId() throws java.io.IOException {
        return header.clientId();
    }

    /**
     * Fences {@code w}'s client off the cluster: Ceph blocklists its address, so the OSDs refuse every operation of
     * it, including those it sent before; returns once this client has the OSD map that lists it. Blocking (a
     * monitor command), bounded by the bdev's timeout.
     */
    public void blocklist(Watcher w) throws java.io.IOException {
        header.blocklist(w);
    }

    /**
     * Calls {@code listener} whenever another client notifies the image's header (before that client's notify
     * returns: it waits for the listener's {@code done}), after the watch was made again, and after a reconnect
     * (blocklisted). Watches the header from the first listener on.
     */
    public void watchHeader(HeaderListener listener) throws java.io.IOException {
        header.watch(listener);
    }

    /**
     * Whether another client watches the image's header now: another gateway serving it (or any client that has the
     * image open; librbd watches the header of every open image). A client that died keeps its watch until Ceph
     * times it out ({@code osd_client_watch_timeout}, 30 s by default).
     */
    public boolean watchedByOthers() throws java.io.IOException {
        return header.watchedByOthers();
    }

    public void unwatchHeader(HeaderListener listener) {
        header.unwatch(listener);
    }

    /** Whether the header is watched now (false while a broken watch has not been made again). */
    public boolean headerWatched() {
        return header.watched();
    }

    /** Whether this client watches the image's header now (another gateway's notifications reach it). */
    public boolean watchesHeader() {
        return header.watched();
    }

    /** Failed attempts of every rbd bdev of this process to watch its header again after the watch broke. */
    public static long rewatchFailuresTotal() {
        return RbdHeaderWatch.rewatchFailuresTotal();
    }

    // ------------------------------------------------------------------ the image's snapshots

    /**
     * Waits until the writes librbd acknowledged on this client are on the OSDs (rbd_flush; with librbd's write-around
     * cache a write completes before it is). Blocking; not on a librados callback thread.
     */
    public void flushAcknowledged() throws java.io.IOException {
        int rc = connection.withConn(c -> RbdNative.flush(c.image));
        if (rc < 0 && rc != -RbdNative.EROFS) {
            throw connection.failure("flush", rc);
        }
    }

    /**
     * Takes RBD snapshot {@code snapshot} of the image on this client's handle (which owns the exclusive lock while
     * it writes, so librbd need not ask another owner). The caller held and drained the writes.
     */
    public void createSnapshot(String snapshot) throws java.io.IOException {
        int rc = connection.withConn(c -> RbdNative.snapCreate(c.image, snapshot));
        if (rc < 0) {
            throw connection.failure("take snapshot " + snapshot + " of", rc);
        }
        refreshAllocation();
    }

    /** Removes RBD snapshot {@code snapshot} of the image (one that is not there is removed already). */
    public void removeSnapshot(String snapshot) throws java.io.IOException {
        int rc = connection.withConn(c -> RbdNative.snapRemove(c.image, snapshot));
        if (rc < 0 && rc != -RbdNative.ENOENT) {
            throw connection.failure("remove snapshot " + snapshot + " of", rc);
        }
    }

    // ------------------------------------------------------------------ blocklisted and reconnecting (RbdConnection)

    /** Tells {@code listener} (on the reconnect thread) when the device is fenced and when it serves again. */
    public void onHealth(java.util.function.Consumer<Health> listener) {
        connection.onHealth(listener);
    }

    /** Whether the device is blocklisted and not reconnected yet (its I/O ends with ANA Inaccessible). */
    public boolean isFenced() {
        return connection.isFenced();
    }

    /** How often this device's client was found blocklisted. */
    public long blocklistedCount() {
        return connection.blocklistedCount();
    }

    /** Blocklist events of every rbd bdev of this process since it started. */
    public static long blocklistedTotal() {
        return RbdConnection.blocklistedTotal();
    }

    /** Reconnects after a blocklist of every rbd bdev of this process since it started. */
    public static long reconnectedTotal() {
        return RbdConnection.reconnectedTotal();
    }

    // ------------------------------------------------------------------ the exclusive lock (RbdExclusiveLock)

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
        lock.acquire();
    }

    /** Gives the exclusive lock up (a no-op when not held, and while blocklisted: the client holds nothing then). */
    public void releaseExclusiveLock() throws java.io.IOException {
        lock.release();
    }

    /** Whether this client owns the image's exclusive lock now. */
    public boolean ownsExclusiveLock() throws java.io.IOException {
        return lock.owns();
    }

    /** Whether the image has RBD's exclusive-lock feature (rbd_get_features), without which any client writes. */
    public boolean hasExclusiveLockFeature() throws java.io.IOException {
        long features = connection.withConnLong(c -> RbdNative.features(c.image));
        if (features < 0) {
            throw connection.failure("read the features of", (int) features);
        }
        return (features & RbdNative.FEATURE_EXCLUSIVE_LOCK) != 0;
    }

    /**
     * The client that owns the image's exclusive lock when it is not this one (rbd_lock_get_owners' name of it), or
     * null when this client or nobody does.
     */
    public String otherLockOwner() throws java.io.IOException {
        String[] owner = new String[1];
        int rc = connection.withConn(c -> RbdNative.lockOtherOwner(c.image, owner));
        if (rc < 0) {
            throw connection.failure("read the lock owner of", rc);
        }
        return rc == 1 ? owner[0] : null;
    }

    // ------------------------------------------------------------------ the block device

    @Override
    public boolean persistent() {
        return true;
    }

    /** How old the allocation figure may be when an Identify Namespace reads it before it is read again. */
    static final long ALLOCATION_STALE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    @Override
    public boolean thinProvisioned() {
        return thin;
    }

    /**
     * Makes the device report itself thin (a thin volume of an {@link RbdPool}: Identify Namespace sets NSFEAT bit 0
     * and reports {@link #allocatedBytes()} as NUSE) and starts the first read of its allocation. An rbd bdev of the
     * document is not thin: its Identify keeps NUSE = NSZE.
     */
    public void thinProvisioned(boolean thin) {
        if (thin && usage == null) {
            usage = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "rbd-usage-" + name());
                t.setDaemon(true);
                return t;
            });
        }
        this.thin = thin;
        refreshAllocation();
    }

    /**
     * The bytes of the objects the image wrote itself (whole 4 MiB objects, a clone's parent's not counted; at most
     * the device's size), as last read from the cluster; -1 before the first read, and on a device that is not thin.
     * Never blocks (Identify Namespace calls it on a poll group): a figure older than {@link #ALLOCATION_STALE_NANOS}
     * is answered as it is and read again on the device's own thread ({@link #refreshAllocation}).
     */
    @Override
    public long allocatedBytes() {
        if (!thin) {
            return -1;
        }
        if (System.nanoTime() - allocatedAt > ALLOCATION_STALE_NANOS) {
            refreshAllocation();
        }
        long a = allocated;
        return a < 0 ? -1 : Math.min(a, numBlocks() * blockSize());
    }

    /**
     * Reads the image's allocation again on the device's own thread ({@code rbd_diff_iterate2}, whole objects, no
     * parent), unless a read is queued or running already; returns at once. A no-op on a device that is not thin.
     */
    public void refreshAllocation() {
        java.util.concurrent.ExecutorService u = usage;
        if (!thin || u == null || !allocationPending.compareAndSet(false, true)) {
            return;
        }
        try {
            u.execute(() -> {
                try {
                    readAllocation();
                } finally {
                    allocationPending.set(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            allocationPending.set(false);
        }
    }

    /** Reads the allocation from the cluster (blocking, on {@link #usage}); a failure keeps the last figure. */
    private void readAllocation() {
        long rc;
        try {
            rc = connection.isClosed() ? -RbdNative.ESHUTDOWN
                : connection.withConnLong(c -> RbdNative.imageAllocatedBytes(c.image));
        } catch (java.io.IOException e) {
            rc = -RbdNative.EIO;
        }
        if (rc >= 0) {
            allocated = rc;
        } else if (!connection.isClosed()) {
            LOG.warn("rbd bdev {}: cannot read the allocation of {}/{}: {}; Identify keeps the last figure", name(),
                options.pool(), options.image(), RbdNative.strerror((int) rc));
        }
        allocatedAt = System.nanoTime();
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
        RbdConnection.Conn c = connection.enter();
        if (c == null) {
            io.bdevComplete(connection.isClosed() ? NvmeStatus.ABORTED_SQ_DELETION : NvmeStatus.ANA_INACCESSIBLE);
            return;
        }
        int slot = take(io, op, c);
        long image = c.image;
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
            connection.leave(c);
            io.bdevComplete(failed(kind, rc, io));
        }
    }

    /** librbd ended the request in {@code slot}: a flush follows where asked, else the submitter hears of it. */
    private void onCompleted(int slot, long tag, long rc) {
        BdevIo io;
        int op;
        RbdConnection.Conn c;
        synchronized (this) {
            io = ios[slot];
            op = ops[slot];
            c = conns[slot];
            if (rc >= 0 && (op & THEN_FLUSH) != 0) {
                ops[slot] = (op & ~THEN_FLUSH) | FLUSHING;
            }
        }
        int kind = op & OP_MASK;
        if (rc >= 0 && (op & THEN_FLUSH) != 0) {
            flushes.increment();
            int f = RbdNative.aioFlush(c.image, tag); // on the connection the write went to
            if (f >= 0) {
                return; // completes when the flush does
            }
            rc = f;
        }
        release(slot);
        connection.leave(c);
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
                if (lock.held()) {
                    connection.suspectBlocklisted(header::probe);
                }
                return NvmeStatus.ANA_TRANSITION;
            }
            case RbdNative.ESHUTDOWN -> {
                connection.blocklisted("a " + opName(kind));
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

    /** A free slot holding {@code io}, {@code op} and the connection {@code c} it goes to. */
    private synchronized int take(BdevIo io, int op, RbdConnection.Conn c) {
        if (freeCount == 0) {
            growSlots();
        }
        int slot = free[--freeCount];
        ios[slot] = io;
        ops[slot] = op;
        conns[slot] = c;
        return slot;
    }

    private synchronized void release(int slot) {
        ios[slot] = null;
        conns[slot] = null;
        free[freeCount++] = slot;
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

    /** Flushes this device handed to librbd (Flush, and after each durable write, Write Zeroes or Deallocate). */
    public long flushes() {
        return flushes.sum();
    }

    /** Requests in librbd now. */
    public int outstanding() {
        return connection.outstanding();
    }

    /**
     * Makes each later {@link #grow} write zeros over the range it adds before the hosts see it, as the image's
     * creation did ({@link RbdNative#thickProvision}; a thick volume of an {@link RbdPool}).
     */
    public void growThick() {
        growThick = true;
    }

    @Override
    public void grow(long newNumBlocks) {
        long bytes = newNumBlocks * blockSize();
        try {
            synchronized (resizing) {
                long size = connection.withConnLong(c -> RbdNative.size(c.image));
                if (size < 0) {
                    throw new BdevException("rbd bdev " + name() + ": cannot read the image's size: "
                        + RbdNative.strerror((int) size));
                }
                if (size < bytes) {
                    int rc = connection.withConn(c -> RbdNative.resize(c.image, bytes));
                    if (rc < 0) {
                        throw new BdevException("rbd bdev " + name() + ": cannot grow " + options.pool() + "/"
                            + options.image() + " to " + bytes + " bytes: " + RbdNative.strerror(rc));
                    }
                    if (growThick) {
                        provisionGrowth(size, bytes);
                    }
                }
                setNumBlocks(newNumBlocks);
            }
            refreshAllocation();
        } catch (java.io.IOException e) {
            throw new BdevException(e.getMessage());
        }
    }

    /**
     * Writes zeros over {@code [from, to)} of the image just grown to {@code to} bytes, which no host sees yet; when
     * that fails the image is set back to {@code from} bytes (nothing of the range was visible) and the grow refused.
     */
    private void provisionGrowth(long from, long to) throws java.io.IOException {
        int rc = connection.withConn(c -> RbdNative.thickProvision(c.cluster, c.image, from, to - from));
        if (rc < 0) {
            int back = connection.withConn(c -> RbdNative.resize(c.image, from));
            String after = back < 0 ? "; the image stays at " + to + " bytes (" + RbdNative.strerror(back) + ")"
                : "; the image is set back to " + from + " bytes";
            throw new BdevException("rbd bdev " + name() + ": cannot write zeros over the " + (to - from) + " bytes"
                + " the grow of thick image " + options.pool() + "/" + options.image() + " adds: "
                + RbdNative.thickError(rc) + after);
        }
    }

    /** Waits for every outstanding request, flushes librbd's cache, and closes image, pool and connection. */
    @Override
    public void close() {
        if (!connection.drainAndClose()) {
            return;
        }
        java.util.concurrent.ExecutorService u = usage;
        if (u != null) {
            u.shutdown();
            try {
                if (!u.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    LOG.warn("rbd bdev {}: the read of its allocation still runs at close", name());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        header.close();
        try {
            connection.flushAndShutdown();
        } finally {
            unregister(index);
        }
    }
}
