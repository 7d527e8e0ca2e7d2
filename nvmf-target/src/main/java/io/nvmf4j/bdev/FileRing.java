package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;

import io.netty.channel.IoEventLoop;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.nvmf4j.runtime.FdWatch;
import io.nvmf4j.runtime.IdleStrategies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One poll group's io_uring ring for the file block devices: the poll group that calls a {@link FileBdev} fills
 * the submission entries, hands them to the kernel once per pass and reaps the completions itself, so an I/O
 * costs no thread switch and completes on the thread that owns its request ({@link BdevIo#bdevComplete}).
 *
 * <p>Why our own ring over the kernel's ABI rather than Netty's io_uring transport: Netty's ring belongs to an
 * {@code IoUringIoHandler}, which a poll group runs only with {@code socketIo io_uring}, and each operation there is
 * an {@code IoUringIoOps} object made per submission. Ours lives beside whichever loop the transports use: the loop
 * watches its fd ({@link FdWatch}: in its epoll, or a poll in its own ring; a completion wakes a blocked poll
 * group), the poll group's idle strategy polls it on every pass ({@link IdleStrategies.Poller}, no system call to
 * reap), and an operation is a slot in preallocated arrays plus an entry written in place, so nothing is allocated
 * per I/O. Why not liburing: see {@code nvmf4j_uring.c}.
 *
 * <p>Entries are written through a direct buffer over the kernel's mapping, at the offsets the library exports
 * ({@link FileNative#uringLayout}); the tails and heads the kernel shares are read with acquire and written with
 * release semantics. At most {@link #slots} operations are in flight (as many as submission entries, so the
 * submission ring never overflows and the completion ring, twice as large, neither); a device whose operation
 * finds no slot takes its worker threads instead.
 *
 * <p>Owning thread: the poll group's event loop, which alone calls every method but {@link #unavailabilityCause}.
 */
final class FileRing implements IdleStrategies.Poller {
    private static final Logger LOG = LoggerFactory.getLogger(FileRing.class);
    /** Submission entries asked for per ring (the kernel rounds to a power of two). */
    static final int ENTRIES = 512;
    /**
     * Bounce buffers of a ring, for write data O_DIRECT cannot take in place (in-capsule data where the socket put
     * it): made on the ring's first such write, 4 KiB-aligned, {@link #BOUNCE_SIZE} bytes each (the largest
     * in-capsule data a transport accepts); a larger write, or one that finds them all in flight, goes to the
     * workers.
     */
    static final int BOUNCES = 64;
    static final int BOUNCE_SIZE = 128 << 10;
    private static final int NO_BOUNCE = -1;
    /** The kernel's rings are in the machine's own byte order (little-endian on x86-64 and aarch64). */
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ORDER);

    // indexes into FileNative.uringLayout's answer (nvmf4j_uring.c's order)
    private static final int L_SQ_ENTRIES = 0;
    private static final int L_CQ_ENTRIES = 1;
    private static final int L_SQ_HEAD = 2;
    private static final int L_SQ_TAIL = 3;
    private static final int L_SQ_MASK = 4;
    private static final int L_CQ_HEAD = 5;
    private static final int L_CQ_TAIL = 6;
    private static final int L_CQ_MASK = 7;
    private static final int L_CQ_CQES = 8;
    private static final int L_SQE_SIZE = 9;
    private static final int L_SQE_OPCODE = 10;
    private static final int L_SQE_FD = 13;
    private static final int L_SQE_OFF = 14;
    private static final int L_SQE_ADDR = 15;
    private static final int L_SQE_LEN = 16;
    private static final int L_SQE_RW_FLAGS = 17;
    private static final int L_SQE_USER_DATA = 18;
    private static final int L_CQE_SIZE = 20;
    private static final int L_CQE_USER_DATA = 21;
    private static final int L_CQE_RES = 22;
    private static final int L_OP_READ = 23;
    private static final int L_OP_WRITE = 24;
    private static final int L_OP_FSYNC = 25;
    private static final int L_OP_FALLOCATE = 26;
    private static final int L_RWF_DSYNC = 27;
    private static final int L_FSYNC_DATASYNC = 28;
    private static final int L_PUNCH_HOLE = 29;
    private static final int L_ZERO_RANGE = 30;

    /** Null where rings can be made, else why not (probed once, with a ring of two entries). */
    private static final String UNAVAILABILITY = probe();
    private static final ThreadLocal<FileRing> RINGS = new ThreadLocal<>();
    /** What {@link #RINGS} holds on a thread that has no ring (not a poll group, or its ring failed). */
    private static final FileRing NONE = new FileRing();

    private final long handle;
    private final int ringFd;
    private final FileDescriptor fd;
    private final String owner;
    private final ByteBuffer sq;
    private final ByteBuffer cq;
    private final ByteBuffer sqes;
    private final int[] layout;
    private final int sqMask;
    private final int cqMask;
    private final int sqeSize;
    private final int cqeSize;
    private final int cqesOffset;
    private final int sqTailOffset;
    private final int cqHeadOffset;
    private final int cqTailOffset;
    // the operations in flight, by slot (the entry's user_data)
    private final FileBdev[] devices;
    private final BdevIo[] ios;
    private final byte[] ops;
    private final byte[] flags;
    /** The bounce buffer an operation in flight holds, by slot, or NO_BOUNCE. */
    private final int[] bounceOf;
    private final int[] free;
    private int freeCount;
    /** The bounce buffers (made on first use), each a view of its own part of one aligned region. */
    private ByteBuffer[] bounces;
    private long bounceAddress;
    private int[] bounceFree;
    private int bounceFreeCount;
    private int sqTail;
    private int cqHead;
    /** Entries written but not yet taken by the kernel. */
    private int pending;
    /** The slot {@link #prepare} took last. */
    private int lastSlot;
    private boolean enterFailed;
    private volatile boolean closed;

    private FileRing() {
        handle = 0;
        ringFd = -1;
        fd = null;
        owner = "none";
        sq = cq = sqes = null;
        layout = null;
        sqMask = cqMask = sqeSize = cqeSize = cqesOffset = sqTailOffset = cqHeadOffset = cqTailOffset = 0;
        devices = null;
        ios = null;
        ops = flags = null;
        bounceOf = free = null;
    }

    private FileRing(long handle, String owner) {
        this.handle = handle;
        this.owner = owner;
        this.ringFd = FileNative.uringFd(handle);
        this.fd = new FileDescriptor(ringFd);
        this.layout = FileNative.uringLayout(handle);
        this.sq = FileNative.uringRegion(handle, 0).order(ORDER);
        this.cq = FileNative.uringRegion(handle, 1).order(ORDER);
        this.sqes = FileNative.uringRegion(handle, 2).order(ORDER);
        this.sqMask = sq.getInt(layout[L_SQ_MASK]);
        this.cqMask = cq.getInt(layout[L_CQ_MASK]);
        this.sqeSize = layout[L_SQE_SIZE];
        this.cqeSize = layout[L_CQE_SIZE];
        this.cqesOffset = layout[L_CQ_CQES];
        this.sqTailOffset = layout[L_SQ_TAIL];
        this.cqHeadOffset = layout[L_CQ_HEAD];
        this.cqTailOffset = layout[L_CQ_TAIL];
        this.sqTail = (int) INT.getAcquire(sq, sqTailOffset);
        this.cqHead = (int) INT.getAcquire(cq, cqHeadOffset);
        int slots = layout[L_SQ_ENTRIES];
        this.devices = new FileBdev[slots];
        this.ios = new BdevIo[slots];
        this.ops = new byte[slots];
        this.flags = new byte[slots];
        this.bounceOf = new int[slots];
        java.util.Arrays.fill(bounceOf, NO_BOUNCE);
        this.free = new int[slots];
        for (int i = 0; i < slots; i++) {
            free[i] = slots - 1 - i;
        }
        this.freeCount = slots;
    }

    private static String probe() {
        if (!FileNative.loaded()) {
            return "libnvmf4j_bdev is not loaded";
        }
        long h = FileNative.uringSetup(2);
        if (h < 0) {
            return describe((int) h);
        }
        FileNative.uringClose(h);
        return null;
    }

    private static String describe(int rc) {
        String why = rc == -FileNative.EOPNOTSUPP ? " (the kernel lacks an io_uring operation the file bdev uses:"
            + " read, write, fsync or fallocate, all from Linux 5.6)" : "";
        return "io_uring_setup: " + FileNative.strerror(rc) + why;
    }

    /** Null when poll groups can have rings, else why not (no io_uring in the kernel, refused by seccomp, ...). */
    static String unavailabilityCause() {
        return UNAVAILABILITY;
    }

    /**
     * The ring of the poll group whose thread calls this, made on its first call there; null on any other thread
     * (a caller that is no poll group of ours, an NIO event loop) and where rings cannot be made.
     */
    static FileRing current() {
        FileRing r = RINGS.get();
        if (r == null) {
            r = open();
            if (r == null) {
                return null; // a poll group before its first pass: asked again on the next call
            }
            RINGS.set(r);
        }
        return r == NONE ? null : r;
    }

    /** This thread's ring, {@link #NONE} where it can have none, or null when that cannot be told yet. */
    private static FileRing open() {
        // Netty's map from an event loop's thread to the loop (internal, but the way its own code finds it)
        EventExecutor executor = ThreadExecutorMap.currentExecutor();
        if (UNAVAILABILITY != null || !(executor instanceof IoEventLoop loop)) {
            return NONE;
        }
        IdleStrategies.Accounting strategy = IdleStrategies.current();
        if (strategy == null) {
            return null; // the strategy registers itself on the loop's first pass
        }
        String name = Thread.currentThread().getName();
        long h = FileNative.uringSetup(ENTRIES);
        if (h < 0) {
            LOG.warn("poll group {}: no io_uring ring ({}); its file bdev I/O goes to worker threads", name,
                describe((int) h));
            return NONE;
        }
        FileRing ring = new FileRing(h, name);
        try {
            FdWatch.watch(loop, ring.fd, ring.toString(), ring::poll);
        } catch (RuntimeException e) {
            // an NIO loop cannot watch the ring's fd
            LOG.info("poll group {}: its event loop cannot watch an io_uring ring ({}); its file bdev I/O goes to"
                + " worker threads", name, e.toString());
            ring.closeRing();
            return NONE;
        }
        strategy.addPoller(ring);
        loop.terminationFuture().addListener(f -> ring.closeRing());
        LOG.info("poll group {}: io_uring ring with {} entries for file bdev I/O", name, ring.slots());
        return ring;
    }

    /** Operations this ring holds in flight at most. */
    int slots() {
        return devices.length;
    }

    /** Operations in flight now. */
    int inFlight() {
        return devices.length - freeCount;
    }

    // ---------------------------------------------------------------- submission

    /** A read of {@code len} bytes at {@code off} into native {@code addr}; false when no slot is free. */
    boolean read(FileBdev d, BdevIo io, int op, int fl, int fileFd, long addr, int len, long off) {
        return prepare(d, io, op, fl, layout[L_OP_READ], fileFd, off, addr, len, 0);
    }

    /** A write, with RWF_DSYNC (durable before it completes) when {@code dsync}; false when no slot is free. */
    boolean write(FileBdev d, BdevIo io, int op, int fl, int fileFd, long addr, int len, long off, boolean dsync) {
        return prepare(d, io, op, fl, layout[L_OP_WRITE], fileFd, off, addr, len, dsync ? layout[L_RWF_DSYNC] : 0);
    }

    /**
     * A write of {@code len} bytes of {@code io}'s buffer, copied first into one of the ring's aligned bounce buffers
     * (for O_DIRECT, which cannot take the buffer in place); false when it is larger than one, or none or no slot is
     * free.
     */
    boolean writeBounced(FileBdev d, BdevIo io, int op, int fl, int fileFd, int len, long off, boolean dsync) {
        if (len > BOUNCE_SIZE || freeCount == 0 || closed) {
            return false;
        }
        if (bounces == null) {
            makeBounces();
        }
        if (bounceFreeCount == 0) {
            return false;
        }
        int b = bounceFree[--bounceFreeCount];
        ByteBuffer dst = bounces[b];
        dst.clear().limit(len);
        io.buffer().getBytes(0, dst);
        prepare(d, io, op, fl, layout[L_OP_WRITE], fileFd, off, bounceAddress + (long) b * BOUNCE_SIZE, len,
            dsync ? layout[L_RWF_DSYNC] : 0);
        bounceOf[lastSlot] = b;
        return true;
    }

    private void makeBounces() {
        ByteBuffer region = ByteBuffer.allocateDirect(BOUNCES * BOUNCE_SIZE + 4096).alignedSlice(4096);
        bounceAddress = FileNative.bufferAddress(region);
        bounces = new ByteBuffer[BOUNCES];
        bounceFree = new int[BOUNCES];
        for (int i = 0; i < BOUNCES; i++) {
            bounces[i] = region.duplicate().clear().position(i * BOUNCE_SIZE).limit((i + 1) * BOUNCE_SIZE).slice();
            bounceFree[i] = BOUNCES - 1 - i;
        }
        bounceFreeCount = BOUNCES;
        LOG.debug("{}: {} bounce buffers of {} KiB for O_DIRECT writes", this, BOUNCES, BOUNCE_SIZE >> 10);
    }

    /** {@code fdatasync} of the file; false when no slot is free. */
    boolean fdatasync(FileBdev d, BdevIo io, int op, int fl, int fileFd) {
        return prepare(d, io, op, fl, layout[L_OP_FSYNC], fileFd, 0, 0, 0, layout[L_FSYNC_DATASYNC]);
    }

    /**
     * {@code fallocate} of [off, off + len): a hole ({@code PUNCH_HOLE | KEEP_SIZE}) or, with {@code zeroRange},
     * a zeroed allocated range ({@code ZERO_RANGE | KEEP_SIZE}); false when no slot is free.
     */
    boolean fallocate(FileBdev d, BdevIo io, int op, int fl, int fileFd, boolean zeroRange, long off, long len) {
        int mode = zeroRange ? layout[L_ZERO_RANGE] : layout[L_PUNCH_HOLE];
        // the entry carries fallocate's length in addr and its mode in len
        return prepare(d, io, op, fl, layout[L_OP_FALLOCATE], fileFd, off, len, mode, 0);
    }

    private boolean prepare(FileBdev d, BdevIo io, int op, int fl, int opcode, int fileFd, long off, long addr,
                            int len, int rwFlags) {
        if (freeCount == 0 || closed) {
            return false;
        }
        int slot = free[--freeCount];
        lastSlot = slot;
        devices[slot] = d;
        ios[slot] = io;
        ops[slot] = (byte) op;
        flags[slot] = (byte) fl;
        int base = (sqTail & sqMask) * sqeSize;
        for (int i = 0; i < sqeSize; i += Long.BYTES) {
            sqes.putLong(base + i, 0L);
        }
        sqes.put(base + layout[L_SQE_OPCODE], (byte) opcode);
        sqes.putInt(base + layout[L_SQE_FD], fileFd);
        sqes.putLong(base + layout[L_SQE_OFF], off);
        sqes.putLong(base + layout[L_SQE_ADDR], addr);
        sqes.putInt(base + layout[L_SQE_LEN], len);
        sqes.putInt(base + layout[L_SQE_RW_FLAGS], rwFlags);
        sqes.putLong(base + layout[L_SQE_USER_DATA], slot);
        sqTail++;
        INT.setRelease(sq, sqTailOffset, sqTail);
        pending++;
        return true;
    }

    /** Hands the kernel what was queued since the last call (one io_uring_enter for all of it). */
    private void submit() {
        int rc = FileNative.uringEnter(ringFd, pending);
        if (rc >= 0) {
            pending -= rc;
            enterFailed = false;
        } else if (!enterFailed) {
            // EAGAIN and EBUSY pass (the next pass tries again); anything else is logged once until it passes
            enterFailed = true;
            LOG.warn("poll group {}: io_uring_enter with {} entries: {}; trying again on the next pass", owner,
                pending, FileNative.strerror(rc));
        }
    }

    // ---------------------------------------------------------------- completion (IdleStrategies.Poller, FdWatch)

    @Override
    public int poll() {
        if (pending > 0) {
            submit();
        }
        return reap();
    }

    /** The poll group's loop watches the ring's fd all along: a completion wakes the blocked loop, nothing to arm. */
    @Override
    public int beforeBlocking() {
        return poll();
    }

    /** Takes every completion there is and hands each to its device; returns how many. */
    private int reap() {
        int n = 0;
        int tail = (int) INT.getAcquire(cq, cqTailOffset);
        // tail - cqHead > 0 rather than !=: a completion that polls this ring again (a device closed from its
        // completion on this poll group) moves cqHead on, possibly past this pass's tail
        while (tail - cqHead > 0) {
            int base = cqesOffset + (cqHead & cqMask) * cqeSize;
            int slot = (int) cq.getLong(base + layout[L_CQE_USER_DATA]);
            int res = cq.getInt(base + layout[L_CQE_RES]);
            cqHead++;
            INT.setRelease(cq, cqHeadOffset, cqHead);
            n++;
            FileBdev d = devices[slot];
            BdevIo io = ios[slot];
            int op = ops[slot];
            int fl = flags[slot];
            devices[slot] = null;
            ios[slot] = null;
            if (bounceOf[slot] != NO_BOUNCE) {
                bounceFree[bounceFreeCount++] = bounceOf[slot];
                bounceOf[slot] = NO_BOUNCE;
            }
            free[freeCount++] = slot;
            d.ringCompleted(this, io, op, fl, res);
            if (tail - cqHead <= 0) {
                tail = (int) INT.getAcquire(cq, cqTailOffset);
            }
        }
        return n;
    }

    /** Unmaps the ring and closes its fd once the poll group has ended (the kernel ends what is in flight). */
    private void closeRing() {
        if (!closed) {
            closed = true;
            FileNative.uringClose(handle);
        }
    }

    @Override
    public String toString() {
        return "io_uring ring of " + owner;
    }
}
