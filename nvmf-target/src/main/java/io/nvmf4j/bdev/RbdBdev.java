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
 * <p>Durability: librbd's cache (on by default, {@code rbd_cache}) is this device's volatile write cache.
 * Flush is {@code rbd_aio_flush}; a write with FUA, or any write, Write Zeroes or Deallocate while the write
 * cache is turned off (Set Features 06h), is followed by an {@code rbd_aio_flush} before it completes.
 *
 * <p>Deallocate is {@code rbd_aio_discard} with {@code rbd_skip_partial_discard} off (set at connect), so a
 * range smaller than an object or not aligned to one is zeroed rather than skipped, and every deallocated
 * block reads back as zeros; whole objects are freed. Write Zeroes is {@code rbd_aio_write_zeroes}.
 * Compare is the command layer's read-and-compare (the engine has no fused Compare and Write, so
 * {@code rbd_aio_compare_and_write} is not needed).
 */
public final class RbdBdev extends AbstractBdev {
    private static final Logger LOG = LoggerFactory.getLogger(RbdBdev.class);

    /** What one rbd bdev opens: pool and image, and how to reach the cluster. */
    public record Options(String pool, String image, String cephConf, String clientName, String keyring,
                          boolean create, int timeoutSeconds) {
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
    private final long cluster;
    private final long ioctx;
    private final long image;
    private final int index;
    private final DiscardLimits limits;
    private volatile boolean writeCache = true;
    // the outstanding requests: slot -> io and op; free slots on a stack; guarded by this
    private BdevIo[] ios = new BdevIo[INITIAL_SLOTS];
    private int[] ops = new int[INITIAL_SLOTS];
    private int[] free = new int[INITIAL_SLOTS];
    private int freeCount;
    private int outstanding;
    private boolean closed;
    /** Told when another client notifies the image's header (see {@link #watchHeader}); any thread. */
    private final java.util.List<java.util.function.IntConsumer> headerListeners =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Serializes the control calls (watch, exclusive lock); never taken on the I/O path. */
    private final Object control = new Object();
    /**
     * The image's header object, {@code rbd_header.<id>}; null until first needed (set under control, read without
     * it: the watch callback must not wait for a control call, which may itself wait for librbd's callbacks).
     */
    private volatile String headerOid;
    /** The header watch's handle, 0 when none. Guarded by control. */
    private long watch;

    private RbdBdev(String name, int blockSize, long numBlocks, Options options, long cluster, long ioctx,
                    long image) {
        super(name, blockSize, numBlocks);
        this.options = options;
        this.cluster = cluster;
        this.ioctx = ioctx;
        this.image = image;
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
        long cluster = RbdNative.connect(o.cephConf(), o.clientName(), o.keyring(), o.timeoutSeconds());
        if (cluster < 0) {
            throw new BdevException(what + "cannot connect to the Ceph cluster of " + o.cephConf() + " as "
                + o.clientName() + " (keyring " + o.keyring() + "): " + RbdNative.strerror((int) cluster)
                + hint((int) cluster));
        }
        long ioctx = 0;
        long image = 0;
        try {
            ioctx = RbdNative.openPool(cluster, o.pool());
            if (ioctx < 0) {
                throw new BdevException(what + "cannot open pool '" + o.pool() + "': "
                    + RbdNative.strerror((int) ioctx));
            }
            image = openOrCreate(what, ioctx, blockSize, numBlocks, o);
            long bytes = RbdNative.size(image);
            if (bytes < 0) {
                throw new BdevException(what + "cannot read the size of " + o.pool() + "/" + o.image() + ": "
                    + RbdNative.strerror((int) bytes));
            }
            if (bytes < numBlocks * blockSize) {
                int rc = RbdNative.resize(image, numBlocks * blockSize);
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
            RbdBdev b = new RbdBdev(name, blockSize, bytes / blockSize, o, cluster, ioctx, image);
            LOG.info("rbd bdev {}: {}/{} as {}, {} blocks of {} bytes", name, o.pool(), o.image(), o.clientName(),
                bytes / blockSize, blockSize);
            return b;
        } catch (RuntimeException e) {
            if (image > 0) {
                RbdNative.close(image);
            }
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
        byte[] out = new byte[4096];
        while (true) {
            int n = RbdNative.metadataGet(ioctx, headerOid(), key, out);
            if (n == -RbdNative.ENOENT) {
                return null;
            }
            if (n == -RbdNative.ERANGE && out.length < (1 << 24)) {
                out = new byte[out.length * 4];
                continue;
            }
            if (n < 0) {
                throw new java.io.IOException("rbd bdev " + name() + ": cannot read metadata " + key + " of "
                    + options.pool() + "/" + options.image() + ": " + RbdNative.strerror(n));
            }
            return java.util.Arrays.copyOf(out, n);
        }
    }

    /**
     * Sets the image's metadata {@code key} to {@code value} if it is still {@code expected} (null: the key is
     * absent), atomically on the OSD (compare and set in one operation on the header object): true, or false when
     * another client changed it since it was read. Does not notify: see {@link #notifyHeader()}.
     */
    public boolean compareAndSetMetadata(String key, byte[] expected, byte[] value) throws java.io.IOException {
        if (value.length == 0) {
            throw new IllegalArgumentException("an empty value cannot be told from an absent one");
        }
        int rc = RbdNative.metadataCas(ioctx, headerOid(), key, expected, value);
        if (rc == -RbdNative.ECANCELED) {
            return false;
        }
        if (rc < 0) {
            throw new java.io.IOException("rbd bdev " + name() + ": cannot write metadata " + key + " of "
                + options.pool() + "/" + options.image() + ": " + RbdNative.strerror(rc));
        }
        return true;
    }

    /**
     * Notifies every client watching the image's header (other gateways' {@link #watchHeader} listeners, and
     * librbd, which takes it as a header update) and waits until each has acknowledged, up to
     * {@code timeoutMs}; false when one did not answer in time (a dead or cut-off gateway: it reads the state
     * again when it opens the image).
     */
    public boolean notifyHeader(int timeoutMs) throws java.io.IOException {
        int rc = RbdNative.notify(ioctx, headerOid(), timeoutMs);
        if (rc == -RbdNative.ETIMEDOUT) {
            return false;
        }
        if (rc < 0) {
            throw new java.io.IOException("rbd bdev " + name() + ": cannot notify the header of " + options.pool()
                + "/" + options.image() + ": " + RbdNative.strerror(rc));
        }
        return true;
    }

    /**
     * Calls {@code listener} (on a librados thread) whenever another client notifies the image's header, before
     * that client's notify returns, with 0; or with a negative errno when the watch broke (it is made again
     * here; what was kept may have changed meanwhile). Watches the header from the first listener on.
     */
    public void watchHeader(java.util.function.IntConsumer listener) throws java.io.IOException {
        headerListeners.add(listener);
        synchronized (control) {
            if (watch == 0 && !isClosed()) {
                long w = RbdNative.watch(ioctx, headerOid(), index);
                if (w < 0) {
                    headerListeners.remove(listener);
                    throw new java.io.IOException("rbd bdev " + name() + ": cannot watch the header of "
                        + options.pool() + "/" + options.image() + ": " + RbdNative.strerror((int) w));
                }
                watch = w;
            }
        }
    }

    public void unwatchHeader(java.util.function.IntConsumer listener) {
        headerListeners.remove(listener);
    }

    private String headerOid() throws java.io.IOException {
        String known = headerOid;
        if (known != null) {
            return known;
        }
        synchronized (control) {
            if (headerOid == null) {
                byte[] out = new byte[128];
                int n = RbdNative.headerOid(image, out);
                if (n < 0) {
                    throw new java.io.IOException("rbd bdev " + name() + ": cannot read the id of " + options.pool()
                        + "/" + options.image() + ": " + RbdNative.strerror(n));
                }
                headerOid = new String(out, 0, n, java.nio.charset.StandardCharsets.US_ASCII);
            }
            return headerOid;
        }
    }

    /** The header of the device with index {@code tag} was notified (a librados thread). */
    static void headerUpdated(long tag, int err) {
        RbdBdev[] r = registry;
        RbdBdev b = tag < r.length ? r[(int) tag] : null;
        if (b != null) {
            b.onHeaderUpdated(err);
        }
    }

    private void onHeaderUpdated(int err) {
        if (err < 0) {
            LOG.warn("rbd bdev {}: the watch of {}/{} broke ({}); watching again", name(), options.pool(),
                options.image(), RbdNative.strerror(err));
            Thread t = new Thread(this::rewatch, "rbd-rewatch-" + name());
            t.setDaemon(true);
            t.start();
        }
        for (java.util.function.IntConsumer l : headerListeners) {
            try {
                l.accept(err);
            } catch (RuntimeException e) {
                LOG.error("rbd bdev {}: a header listener failed", name(), e);
            }
        }
    }

    /** Makes a broken watch again (its own thread: a watch cannot end inside its own callback). */
    private void rewatch() {
        synchronized (control) {
            if (isClosed() || watch == 0) {
                return;
            }
            RbdNative.unwatch(watch);
            watch = 0;
            try {
                long w = RbdNative.watch(ioctx, headerOid(), index);
                if (w < 0) {
                    LOG.error("rbd bdev {}: cannot watch the header again: {}", name(), RbdNative.strerror((int) w));
                    return;
                }
                watch = w;
                onHeaderUpdated(0); // changes may have been missed while the watch was down
            } catch (java.io.IOException e) {
                LOG.error("rbd bdev {}: {}", name(), e.getMessage());
            }
        }
    }

    // ------------------------------------------------------------------ the exclusive lock

    /**
     * Takes the image's exclusive lock and keeps it (librbd hands it to no other client until
     * {@link #releaseExclusiveLock()}: their writes fail with EROFS). First by asking: a client that holds it
     * automatically (it wrote last) hands it over. When that is refused (another client keeps it explicitly) or
     * fails (its owner died and does not answer), the owner's lock is broken, which blocklists it: a gateway that
     * was cut off cannot write after this returns. Blocking; for the control path.
     */
    public void acquireExclusiveLock() throws java.io.IOException {
        synchronized (control) {
            int rc = RbdNative.lockAcquire(image);
            if (rc == 0) {
                LOG.info("rbd bdev {}: holds the exclusive lock of {}/{}", name(), options.pool(), options.image());
                return;
            }
            if (rc != -RbdNative.EROFS && rc != -RbdNative.EBUSY && rc != -RbdNative.ETIMEDOUT) {
                throw lockFailure("take", rc); // no exclusive-lock feature (EINVAL), blocklisted, ...: nothing to break
            }
            LOG.warn("rbd bdev {}: the owner of the exclusive lock of {}/{} did not hand it over ({}); breaking its"
                + " lock (Ceph blocklists it)", name(), options.pool(), options.image(), RbdNative.strerror(rc));
            int broken = RbdNative.lockBreakOthers(image);
            if (broken < 0) {
                throw lockFailure("break the previous owner's", broken);
            }
            rc = RbdNative.lockAcquire(image);
            if (rc < 0) {
                throw lockFailure("take", rc);
            }
            LOG.info("rbd bdev {}: holds the exclusive lock of {}/{} (broke {} other owner(s))", name(),
                options.pool(), options.image(), broken);
        }
    }

    /** Gives the exclusive lock up (a no-op when not held). */
    public void releaseExclusiveLock() throws java.io.IOException {
        synchronized (control) {
            if (RbdNative.lockOwned(image) != 1) {
                return;
            }
            int rc = RbdNative.lockRelease(image);
            if (rc < 0) {
                throw lockFailure("release", rc);
            }
            LOG.info("rbd bdev {}: released the exclusive lock of {}/{}", name(), options.pool(), options.image());
        }
    }

    /** Whether this client owns the image's exclusive lock now. */
    public boolean ownsExclusiveLock() throws java.io.IOException {
        int rc = RbdNative.lockOwned(image);
        if (rc < 0) {
            throw lockFailure("query", rc);
        }
        return rc == 1;
    }

    private java.io.IOException lockFailure(String what, int rc) {
        return new java.io.IOException("rbd bdev " + name() + ": cannot " + what + " the exclusive lock of "
            + options.pool() + "/" + options.image() + ": " + RbdNative.strerror(rc));
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean writeCacheEnabled() {
        return writeCache;
    }

    @Override
    public void setWriteCacheEnabled(boolean enabled) {
        writeCache = enabled;
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
        submit(io, io.fua() || !writeCache ? OP_WRITE | THEN_FLUSH : OP_WRITE);
    }

    @Override
    public void flush(BdevIo io) {
        submit(io, OP_FLUSH);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        submit(io, writeCache ? OP_WRITE_ZEROES : OP_WRITE_ZEROES | THEN_FLUSH);
    }

    @Override
    public void deallocate(BdevIo io) {
        submit(io, writeCache ? OP_DEALLOCATE : OP_DEALLOCATE | THEN_FLUSH);
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
            io.bdevComplete(NvmeStatus.ABORTED_SQ_DELETION);
            return;
        }
        long tag = ((long) index << 32) | slot;
        int rc = switch (kind) {
            case OP_READ -> RbdNative.aioRead(image, tag, io.offset(), io.length(), address);
            case OP_WRITE -> RbdNative.aioWrite(image, tag, io.offset(), io.length(), address);
            case OP_FLUSH -> RbdNative.aioFlush(image, tag);
            case OP_WRITE_ZEROES -> RbdNative.aioWriteZeroes(image, tag, io.offset(), io.length());
            default -> RbdNative.aioDiscard(image, tag, io.offset(), io.length());
        };
        if (rc < 0) {
            release(slot);
            io.bdevComplete(failed(kind, rc, io));
        }
    }

    /** librbd ended the request in {@code slot}: a flush follows where asked, else the submitter hears of it. */
    private void onCompleted(int slot, long tag, long rc) {
        BdevIo io;
        int op;
        synchronized (this) {
            io = ios[slot];
            op = ops[slot];
            if (rc >= 0 && (op & THEN_FLUSH) != 0) {
                ops[slot] = (op & ~THEN_FLUSH) | FLUSHING;
            }
        }
        int kind = op & OP_MASK;
        if (rc >= 0 && (op & THEN_FLUSH) != 0) {
            int f = RbdNative.aioFlush(image, tag);
            if (f >= 0) {
                return; // completes when the flush does
            }
            rc = f;
        }
        release(slot);
        io.bdevCompleteAsync(rc < 0 ? failed((op & FLUSHING) != 0 ? OP_FLUSH : kind, (int) rc, io) : NvmeStatus.SUCCESS);
    }

    /**
     * The status of a failed operation: {@link BdevErrors#status} but for what only librbd's exclusive lock
     * causes. EROFS: another client keeps the lock (the optimized gateway, see acquireExclusiveLock), so this
     * path cannot write now: Asymmetric Access Transition, a path error the host retries on another path.
     * ESHUTDOWN: this client was blocklisted (another gateway broke its lock): Asymmetric Access Persistent Loss,
     * as no write through this gateway can succeed again.
     */
    private int failed(int kind, int rc, BdevIo io) {
        LOG.warn("rbd bdev {}: {} of {} bytes at {} failed: {}", name(), opName(kind), io.length(), io.offset(),
            RbdNative.strerror(rc));
        return switch (-rc) {
            case RbdNative.EROFS -> NvmeStatus.ANA_TRANSITION;
            case RbdNative.ESHUTDOWN -> NvmeStatus.ANA_PERSISTENT_LOSS;
            default -> BdevErrors.status(kind, rc);
        };
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

    /** A free slot holding {@code io} and {@code op}, or -1 once the device is closed. */
    private synchronized int take(BdevIo io, int op) {
        if (closed) {
            return -1;
        }
        if (freeCount == 0) {
            growSlots();
        }
        int slot = free[--freeCount];
        ios[slot] = io;
        ops[slot] = op;
        outstanding++;
        return slot;
    }

    private synchronized void release(int slot) {
        ios[slot] = null;
        free[freeCount++] = slot;
        outstanding--;
        if (closed && outstanding == 0) {
            notifyAll();
        }
    }

    /** Doubles the slot table (more requests outstanding than ever before; not per I/O). */
    private void growSlots() {
        int n = ios.length;
        ios = java.util.Arrays.copyOf(ios, n * 2);
        ops = java.util.Arrays.copyOf(ops, n * 2);
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

    /** Requests in librbd now. */
    public synchronized int outstanding() {
        return outstanding;
    }

    @Override
    public synchronized void grow(long newNumBlocks) {
        long bytes = newNumBlocks * blockSize();
        long size = RbdNative.size(image);
        if (size < 0) {
            throw new BdevException("rbd bdev " + name() + ": cannot read the image's size: "
                + RbdNative.strerror((int) size));
        }
        if (size < bytes) {
            int rc = RbdNative.resize(image, bytes);
            if (rc < 0) {
                throw new BdevException("rbd bdev " + name() + ": cannot grow " + options.pool() + "/"
                    + options.image() + " to " + bytes + " bytes: " + RbdNative.strerror(rc));
            }
        }
        setNumBlocks(newNumBlocks);
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
        try {
            int rc = RbdNative.flush(image);
            if (rc == -RbdNative.EROFS) {
                // another gateway keeps the exclusive lock: this one gave it up, and flushed its cache then
                LOG.info("rbd bdev {}: not the exclusive lock's owner at close; nothing of it is cached", name());
            } else if (rc < 0) {
                LOG.error("rbd bdev {}: the final flush of {}/{} failed: {}", name(), options.pool(), options.image(),
                    RbdNative.strerror(rc));
            }
            RbdNative.close(image);
        } finally {
            RbdNative.closePool(ioctx);
            RbdNative.shutdown(cluster);
            unregister(index);
        }
    }
}
