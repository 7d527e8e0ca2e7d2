package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;
import io.nvmf4j.storage.BdevException;
import io.nvmf4j.storage.StorageFile;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A regular file or a block device, driven through {@code libnvmf4j_bdev} ({@link FileNative}). The poll groups
 * never block on the disk and nothing is allocated per I/O, on either of two paths chosen at creation
 * ({@link BdevConfig#ioEngine}, reported in the log and by {@link #ioEngine()}):
 *
 * <ul>
 *   <li>io_uring: the poll group that calls the device writes the operation into its own ring ({@link FileRing})
 *       and reaps the completion on a later pass, so the request completes on its own thread without a thread
 *       switch. Write data O_DIRECT cannot take in place (in-capsule data where the socket put it) is copied into
 *       one of the ring's aligned bounce buffers first. What the ring does not take goes to the workers: a caller
 *       that is no poll group, a read buffer without an address or (with {@code directIo}) unaligned, a write
 *       larger than a ring's bounce buffer that needs one, zeroing where the file system lacks a fallocate mode and
 *       on block devices (ioctls), a full ring, and the rare completion that needs their loop (a short transfer,
 *       O_DIRECT refusing a buffer).</li>
 *   <li>worker threads ({@link FileIoQueue}): the system calls run on a pool of threads and completions go back
 *       to the poll group; requests beyond the workers wait in order instead of being refused. The only path
 *       where io_uring is missing or refused (an old kernel, seccomp, {@code kernel.io_uring_disabled}).</li>
 * </ul>
 *
 * Both paths keep the same rules, below: an operation is a system call on one path and the matching io_uring
 * operation on the other (pwritev2(RWF_DSYNC) and a write with RWF_DSYNC, fdatasync and IORING_FSYNC_DATASYNC,
 * fallocate and IORING_OP_FALLOCATE), and its result is judged by the same methods.
 *
 * <p>Durability. Writes go to the page cache (or, with {@code directIo}, O_DIRECT to the device, whose own
 * cache may hold them) while the write cache is on ({@link #writeCacheEnabled()}, the default); Flush is
 * {@code fdatasync}. A write with FUA, and every write while the cache is off, is {@code pwritev2(RWF_DSYNC)}
 * and completes only once it is on stable media. A failed {@code fdatasync} or durable write is remembered
 * ({@link #stickyErrorStatus()}): Linux reports a writeback error to a file once and drops the failed
 * pages, so a later {@code fdatasync} would succeed although acknowledged data is gone.
 *
 * <p>Deallocate punches a hole ({@code fallocate(PUNCH_HOLE | KEEP_SIZE)}) in a regular file and is
 * {@code BLKDISCARD} on a block device; Write Zeroes is {@code fallocate(ZERO_RANGE)} (else a hole) on a
 * file and {@code BLKZEROOUT} on a block device. Where the file system has neither, zeros are written in
 * bounded chunks and {@link #discardLimits()} says so. A regular file that is shorter than
 * {@code numBlocks} is extended (sparse).
 */
public final class FileBdev extends AbstractBdev {
    private static final Logger LOG = LoggerFactory.getLogger(FileBdev.class);

    /** Operation codes in the I/O queue. */
    static final int OP_READ = BdevErrors.OP_READ;
    static final int OP_WRITE = BdevErrors.OP_WRITE;
    static final int OP_FLUSH = BdevErrors.OP_FLUSH;
    static final int OP_WRITE_ZEROES = BdevErrors.OP_WRITE_ZEROES;
    static final int OP_DEALLOCATE = BdevErrors.OP_DEALLOCATE;

    /**
     * What every write and flush fails with once data may have been lost: Write Fault (the data could not
     * be committed to the media), with DNR, because no retry can bring the dropped pages back (without it a
     * Linux host retries each command five times).
     */
    static final int STICKY_STATUS = NvmeStatus.WRITE_FAULT | NvmeStatus.DNR;

    /** O_DIRECT buffers at this alignment are used in place; others go through the worker's bounce buffer. */
    private static final int DIRECT_ALIGNMENT = BUFFER_ALIGNMENT;
    /** Zeros written at once where the file system can neither punch holes nor zero ranges. */
    private static final int ZERO_CHUNK = 1 << 20;
    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    /** Ring operation flags: the operation must be durable (FUA, or the write cache off). */
    private static final int FL_DURABLE = 1;
    /** Ring operation flags: the write-through fdatasync that follows a zeroing with the write cache off. */
    private static final int FL_SYNC = 2;
    /** {@link #ringStatus}: the operation went on (its next step on the ring, or the workers); no completion yet. */
    private static final int CONTINUES = -1;

    /** The flush queued when the write cache is turned off: nobody waits for its completion. */
    private static final BdevIo CACHE_FLUSH = new FlushIo() {
        @Override
        public void bdevComplete(int status) {
            // the outcome is in stickyErrorStatus()
        }

        @Override
        public void bdevCompleteAsync(int status) {
            // the outcome is in stickyErrorStatus()
        }
    };

    private final Path path;
    private final int fd;
    private final boolean directIo;
    /** Reads and writes that went through a bounce buffer, a worker's or a ring's (see {@link #bouncedIos()}). */
    private final AtomicLong bounced = new AtomicLong();
    private final boolean blockDevice;
    private final FileIoQueue queue;
    /** Whether the poll groups' io_uring rings take this device's I/O (else only the workers). */
    private final boolean ring;
    /** Operations of this device on the rings now (close waits for them). */
    private final AtomicInteger ringInFlight = new AtomicInteger();
    /** Set by {@link #close()}: the rings take nothing more. */
    private volatile boolean closing;
    /** Deallocate and Write Zeroes limits while hole punching works, and after it turned out not to. */
    private final DiscardLimits limits;
    private final DiscardLimits zeroWritingLimits;
    private final ByteBuffer zeros;
    private final long zerosAddress;
    private volatile boolean punchHoles;
    private volatile boolean zeroRanges;
    private volatile boolean writeCache = true;
    private final AtomicInteger sticky = new AtomicInteger(NvmeStatus.SUCCESS);
    private final AtomicLong durabilityErrors = new AtomicLong();
    /** A thin volume of a pool (see {@link #thinProvisioned()}). */
    private volatile boolean thin;
    private boolean closed;

    private FileBdev(String name, Path path, int fd, int blockSize, long numBlocks, boolean directIo,
                     boolean blockDevice, boolean punchHoles, DiscardLimits limits, int ioWorkers, int ioQueueDepth,
                     boolean ring) {
        super(name, blockSize, numBlocks);
        this.ring = ring;
        this.path = path;
        this.fd = fd;
        this.directIo = directIo;
        this.blockDevice = blockDevice;
        this.punchHoles = punchHoles;
        this.zeroRanges = !blockDevice;
        this.limits = limits;
        this.zeroWritingLimits = new DiscardLimits(true, false, true, false, 256, 8 * MIB / blockSize,
            64 * MIB / blockSize);
        ByteBuffer z = ByteBuffer.allocateDirect(ZERO_CHUNK + 4096).alignedSlice(4096);
        z.limit(ZERO_CHUNK);
        this.zeros = z.slice();
        this.zerosAddress = FileNative.bufferAddress(zeros);
        FileIoQueue.Executor executor = this::execute;
        this.queue = new FileIoQueue(name, ioWorkers, ioQueueDepth, executor);
    }

    /**
     * Opens (creating a regular file of mode 0600 if absent, in a directory that must exist) the file at {@code path}
     * with the default worker count and queue depth, allowing only {@code path}'s own directory (no block device:
     * see the overload with a {@link StorageConfig}). {@code numBlocks == 0} takes the current size; a regular file
     * shorter than {@code numBlocks} blocks is extended.
     */
    public static FileBdev open(String name, Path path, int blockSize, long numBlocks, boolean directIo) {
        return open(name, path, blockSize, numBlocks, directIo, BdevConfig.DEFAULT_IO_WORKERS,
            BdevConfig.DEFAULT_IO_QUEUE_DEPTH);
    }

    /** As {@link #open(String, Path, int, long, boolean)}, with {@code ioWorkers} threads and FIFO depth. */
    public static FileBdev open(String name, Path path, int blockSize, long numBlocks, boolean directIo,
                                int ioWorkers, int ioQueueDepth) {
        Path abs = path.toAbsolutePath().normalize();
        return open(name, abs, blockSize, numBlocks, directIo, ioWorkers, ioQueueDepth,
            StorageConfig.directories(String.valueOf(abs.getParent())));
    }

    /**
     * As {@link #open(String, Path, int, long, boolean, int, int)}, where {@code storage} allows: a regular file
     * under one of its directories reached without symbolic links, or one of its listed block devices; the opened
     * descriptor's type decides, never a path checked before the open ({@link StorageFile}).
     */
    public static FileBdev open(String name, Path path, int blockSize, long numBlocks, boolean directIo,
                                int ioWorkers, int ioQueueDepth, StorageConfig storage) {
        return open(name, path, blockSize, numBlocks, directIo, ioWorkers, ioQueueDepth, storage,
            BdevConfig.IO_ENGINE_AUTO);
    }

    /**
     * As {@link #open(String, Path, int, long, boolean, int, int, StorageConfig)}, with the I/O path
     * {@code ioEngine} ({@link BdevConfig#ioEngine}: {@code auto}, {@code io_uring} or {@code threads}).
     */
    public static FileBdev open(String name, Path path, int blockSize, long numBlocks, boolean directIo,
                                int ioWorkers, int ioQueueDepth, StorageConfig storage, String ioEngine) {
        BdevException.requireFileNative("file bdev " + name);
        boolean ring = chooseRing(name, ioEngine, ioWorkers);
        if (directIo) {
            checkDirectIoAlignment(name, path, blockSize);
        }
        StorageFile file = StorageFile.open(name, path, storage, true, directIo);
        boolean existed = !file.created();
        boolean blockDevice = file.blockDevice();
        int fd = file.release();
        try {
            long size = check(name, path, "size", FileNative.size(fd));
            long blocks = numBlocks;
            if (blocks == 0) {
                blocks = size / blockSize;
            } else if (size < blocks * blockSize) {
                if (blockDevice) {
                    throw new BdevException("file bdev " + name + ": " + path + " holds " + size
                        + " bytes, fewer than numBlocks " + numBlocks + " x " + blockSize);
                }
                check(name, path, "extend", FileNative.setSize(fd, blocks * blockSize));
            }
            if (blocks <= 0) {
                throw new BdevException("file bdev " + name + ": " + path
                    + " is empty; give numBlocks to create it with a size");
            }
            if (!existed) {
                syncDirectory(path);
            }
            boolean punch = !blockDevice && probePunchHole(fd, Math.max(size, blocks * blockSize), blockSize);
            DiscardLimits limits = blockDevice ? blockDeviceLimits(path, blockSize)
                : punch ? new DiscardLimits(true, true, true, false, 256, GIB / blockSize, 16 * GIB / blockSize)
                : null;
            FileBdev d = new FileBdev(name, path, fd, blockSize, blocks, directIo, blockDevice, punch, limits,
                ioWorkers, ioQueueDepth, ring);
            if (!blockDevice && !punch) {
                LOG.warn("file bdev {}: the file system of {} cannot punch holes; Deallocate writes zeros", name, path);
            }
            return d;
        } catch (RuntimeException e) {
            FileNative.close(fd);
            throw e;
        }
    }

    /**
     * Whether the rings take the device's I/O: {@code auto} where io_uring works, {@code io_uring} or no device,
     * {@code threads} never. Logs the choice.
     */
    private static boolean chooseRing(String name, String ioEngine, int ioWorkers) {
        String unavailable = FileRing.unavailabilityCause();
        switch (ioEngine) {
            case BdevConfig.IO_ENGINE_THREADS -> {
                LOG.info("file bdev {}: I/O on {} worker threads (ioEngine {})", name, ioWorkers, ioEngine);
                return false;
            }
            case BdevConfig.IO_ENGINE_URING, BdevConfig.IO_ENGINE_AUTO -> {
                if (unavailable == null) {
                    LOG.info("file bdev {}: I/O through each poll group's io_uring ring; {} worker threads for the"
                        + " rest", name, ioWorkers);
                    return true;
                }
                if (BdevConfig.IO_ENGINE_URING.equals(ioEngine)) {
                    throw new BdevException("file bdev " + name + ": ioEngine io_uring, but io_uring is unavailable: "
                        + unavailable);
                }
                LOG.info("file bdev {}: io_uring is unavailable ({}); I/O on {} worker threads", name, unavailable,
                    ioWorkers);
                return false;
            }
            default -> throw new BdevException("file bdev " + name + ": unknown ioEngine '" + ioEngine + "' (expected "
                + String.join(", ", BdevConfig.IO_ENGINES) + ")");
        }
    }

    private static long check(String name, Path path, String what, long rc) {
        if (rc < 0) {
            throw new BdevException("file bdev " + name + ": " + path + ": " + what + " failed: "
                + FileNative.strerror((int) rc));
        }
        return rc;
    }

    /**
     * Whether the file system punches holes: a punch past the end of the file (KEEP_SIZE) changes nothing
     * but is refused with EOPNOTSUPP where hole punching is missing.
     */
    private static boolean probePunchHole(int fd, long end, int blockSize) {
        return FileNative.punchHole(fd, end, blockSize) == 0;
    }

    /**
     * A block device frees discarded blocks when its queue takes discards ({@code discard_max_bytes > 0});
     * discarded blocks read zeros only where the device says so ({@code discard_zeroes_data}).
     */
    private static DiscardLimits blockDeviceLimits(Path path, int blockSize) {
        Path queue = sysfsQueue(path);
        long maxBytes = queue == null ? 0 : readLong(queue.resolve("discard_max_bytes"));
        if (maxBytes <= 0) {
            return new DiscardLimits(false, false, false, false, 256, 0, 0);
        }
        boolean zeroes = readLong(queue.resolve("discard_zeroes_data")) == 1;
        return new DiscardLimits(true, true, zeroes, false, 256, GIB / blockSize, 16 * GIB / blockSize);
    }

    /** {@code /sys/class/block/<dev>/queue}, or its parent disk's for a partition; null if neither exists. */
    private static Path sysfsQueue(Path device) {
        try {
            Path dev = Path.of("/sys/class/block", device.toRealPath().getFileName().toString()).toRealPath();
            for (Path p : new Path[] {dev.resolve("queue"), dev.getParent().resolve("queue")}) {
                if (Files.isDirectory(p)) {
                    return p;
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("no sysfs queue for {}: {}", device, e.toString());
        }
        return null;
    }

    private static long readLong(Path file) {
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Makes a new file's directory entry durable (fsync of the directory). */
    private static void syncDirectory(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null) {
            return;
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            LOG.warn("fsync of directory {} failed: {}", dir, e.toString());
        }
    }

    /**
     * O_DIRECT needs every offset and length aligned to the filesystem's block size; a namespace block
     * smaller than that would fail unaligned I/O, so refuse it up front.
     */
    private static void checkDirectIoAlignment(String name, Path path, int blockSize) {
        Path existing = Files.exists(path) ? path : path.toAbsolutePath().getParent();
        long fsBlock;
        try {
            fsBlock = existing == null ? 4096 : Files.getFileStore(existing).getBlockSize();
        } catch (IOException | UnsupportedOperationException e) {
            fsBlock = 4096;
        }
        if (blockSize < fsBlock) {
            throw new BdevException("file bdev " + name + ": directIo needs blockSize >= the filesystem block size ("
                + fsBlock + " bytes at " + existing + "), got " + blockSize);
        }
    }

    @Override
    public boolean persistent() {
        return true;
    }

    public Path path() {
        return path;
    }

    /** Whether this is a block device (else a regular file). */
    public boolean isBlockDevice() {
        return blockDevice;
    }

    @Override
    public boolean thinProvisioned() {
        return thin;
    }

    /** Makes the device report itself thin (a sparse volume of a pool) or not. */
    public void thinProvisioned(boolean thin) {
        this.thin = thin;
    }

    /** The open descriptor (the pool clones from it). */
    int fd() {
        return fd;
    }

    /**
     * fdatasync(2) now, on the calling (control) thread: what every completed write left in the page cache is on
     * the medium. SUCCESS, or the durability error every later write and flush fails with.
     */
    public int sync() {
        int rc = FileNative.fdatasync(fd);
        return rc == 0 ? NvmeStatus.SUCCESS : durabilityError("fdatasync", rc, 0, 0);
    }

    /** Bytes the file occupies on its medium ({@code st_blocks} x 512; shared reflink blocks counted in full). */
    @Override
    public long allocatedBytes() {
        return FileNative.allocatedBytes(fd);
    }

    /** Null where the poll groups can have io_uring rings, else why not (probed once per process). */
    public static String ioUringUnavailabilityCause() {
        return FileRing.unavailabilityCause();
    }

    /** The I/O path chosen at creation: {@code io_uring} or {@code threads}. */
    public String ioEngine() {
        return ring ? BdevConfig.IO_ENGINE_URING : BdevConfig.IO_ENGINE_THREADS;
    }

    /** Worker threads, i.e. I/Os in the kernel at once. */
    public int ioWorkers() {
        return queue.workers();
    }

    /** Most I/Os that have waited for a worker at once. */
    public int ioQueueHighWater() {
        return queue.highWater();
    }

    @Override
    public boolean writeCacheEnabled() {
        return writeCache;
    }

    /**
     * Turning the cache off also queues a flush of what it holds, so that from then on nothing acknowledged
     * sits only in the page cache (a failure there is a durability error like any other). Never waits.
     */
    @Override
    public void setWriteCacheEnabled(boolean enabled) {
        boolean was = writeCache;
        writeCache = enabled;
        if (was && !enabled) {
            queue.submit(CACHE_FLUSH, OP_FLUSH);
        }
    }

    @Override
    public DiscardLimits discardLimits() {
        return punchHoles || blockDevice ? limits : zeroWritingLimits;
    }

    @Override
    public int stickyErrorStatus() {
        return sticky.get();
    }

    @Override
    public long durabilityErrors() {
        return durabilityErrors.get();
    }

    @Override
    public void read(BdevIo io) {
        submit(io, OP_READ);
    }

    @Override
    public void write(BdevIo io) {
        submit(io, OP_WRITE);
    }

    @Override
    public void flush(BdevIo io) {
        submit(io, OP_FLUSH);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        submit(io, OP_WRITE_ZEROES);
    }

    @Override
    public void deallocate(BdevIo io) {
        submit(io, OP_DEALLOCATE);
    }

    /**
     * Hands {@code io} to the calling poll group's ring, else queues it for a worker; every submission ends in
     * exactly one completion. A range outside the device, or a closed device, completes at once with Internal
     * Error; after a durability error every operation but a read completes at once with
     * {@link #stickyErrorStatus()}.
     */
    private void submit(BdevIo io, int op) {
        if (io.offset() < 0 || io.length() < 0 || io.offset() + io.length() > numBlocks() * blockSize()) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        int failed = sticky.get();
        if (failed != NvmeStatus.SUCCESS && op != OP_READ) {
            io.bdevComplete(failed);
            return;
        }
        if (ring && submitToRing(io, op)) {
            return;
        }
        if (!queue.submit(io, op)) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
        }
    }

    /** Writes {@code io} into the calling poll group's ring; false when the ring does not take it (see above). */
    private boolean submitToRing(BdevIo io, int op) {
        FileRing r = FileRing.current();
        if (r == null) {
            return false;
        }
        // counted before closing is read: close() sets closing before it waits for the count to drain
        ringInFlight.incrementAndGet();
        boolean durable = op == OP_DEALLOCATE ? !writeCache : io.fua() || !writeCache;
        int fl = durable ? FL_DURABLE : 0;
        boolean queued = !closing && switch (op) {
            case OP_READ -> {
                long a = directAddress(io.buffer());
                yield a != 0 && r.read(this, io, op, fl, fd, a, io.length(), io.offset());
            }
            case OP_WRITE -> {
                long a = directAddress(io.buffer());
                yield a != 0 ? r.write(this, io, op, fl, fd, a, io.length(), io.offset(), durable)
                    : ringBounced(r.writeBounced(this, io, op, fl, fd, io.length(), io.offset(), durable));
            }
            case OP_FLUSH -> r.fdatasync(this, io, op, fl, fd);
            case OP_WRITE_ZEROES -> !blockDevice && zeroRanges
                && r.fallocate(this, io, op, fl, fd, true, io.offset(), io.length());
            case OP_DEALLOCATE -> !blockDevice && punchHoles
                && r.fallocate(this, io, op, fl, fd, false, io.offset(), io.length());
            default -> false;
        };
        if (!queued) {
            ringInFlight.decrementAndGet();
        }
        return queued;
    }

    /** Counts a write the ring took through its bounce buffer; passes {@code queued} on. */
    private boolean ringBounced(boolean queued) {
        if (queued) {
            bounced.incrementAndGet();
        }
        return queued;
    }

    /**
     * A ring operation of this device completed with {@code res} (a count or a negative errno), on the ring's poll
     * group: the request completes there, or goes on.
     */
    void ringCompleted(FileRing r, BdevIo io, int op, int fl, int res) {
        int status;
        try {
            status = ringStatus(r, io, op, fl, res);
        } catch (RuntimeException e) {
            LOG.warn("file bdev {}: {}", name(), e.toString());
            status = NvmeStatus.INTERNAL_ERROR;
        }
        if (status != CONTINUES) {
            ringInFlight.decrementAndGet();
            io.bdevComplete(status);
        }
    }

    /** The status of a ring operation, by the rules the workers apply; {@link #CONTINUES} when it goes on. */
    private int ringStatus(FileRing r, BdevIo io, int op, int fl, int res) {
        long off = io.offset();
        int len = io.length();
        boolean durable = (fl & FL_DURABLE) != 0;
        if ((fl & FL_SYNC) != 0) {
            return res < 0 ? durabilityError(zeroingName(op) + " (write-through)", res, off, len) : NvmeStatus.SUCCESS;
        }
        return switch (op) {
            case OP_READ -> res == len ? NvmeStatus.SUCCESS
                // short (the workers loop until done) or O_DIRECT refused the buffer (the workers bounce it)
                : res >= 0 || res == -FileNative.EINVAL && directIo ? toWorkers(io, op)
                : readFailed(res, off, len);
            case OP_WRITE -> res == len ? NvmeStatus.SUCCESS
                // short, O_DIRECT refused the buffer, or RWF_DSYNC refused (the workers write, then fdatasync)
                : res >= 0 || res == -FileNative.EINVAL && directIo || FileNative.unsupported(res) ? toWorkers(io, op)
                : writeFailed(io, durable, res);
            case OP_FLUSH -> res < 0 ? durabilityError("fdatasync", res, 0, 0) : NvmeStatus.SUCCESS;
            case OP_WRITE_ZEROES, OP_DEALLOCATE -> {
                if (FileNative.unsupported(res)) {
                    yield toWorkers(io, op); // the workers fall back (hole, then zeros) and remember the mode is missing
                }
                if (res < 0) {
                    yield zeroingFailed(zeroingName(op), res, off, len);
                }
                if (durable) {
                    // the slot this operation held is free again: the sync takes it
                    yield r.fdatasync(this, io, op, fl | FL_SYNC, fd) ? CONTINUES : toWorkers(io, op);
                }
                yield NvmeStatus.SUCCESS;
            }
            default -> NvmeStatus.INTERNAL_ERROR;
        };
    }

    /** Moves a ring operation to the workers, which do it again from the start; CONTINUES, or a status. */
    private int toWorkers(BdevIo io, int op) {
        if (!queue.submit(io, op)) {
            return NvmeStatus.INTERNAL_ERROR;
        }
        ringInFlight.decrementAndGet();
        return CONTINUES;
    }

    private static String zeroingName(int op) {
        return op == OP_DEALLOCATE ? "deallocate" : "zeroing";
    }

    /** Runs one queued operation on worker {@code w} (the queue's executor). */
    private int execute(BdevIo io, int op, FileIoQueue.Worker w) {
        if (op != OP_READ) {
            int failed = sticky.get();
            if (failed != NvmeStatus.SUCCESS) {
                return failed;
            }
        }
        boolean durable = io.fua() || !writeCache;
        return switch (op) {
            case OP_READ -> doRead(io, w);
            case OP_WRITE -> doWrite(io, durable, w);
            case OP_FLUSH -> doFlush();
            case OP_WRITE_ZEROES -> doWriteZeroes(io.offset(), io.length(), durable);
            case OP_DEALLOCATE -> doDeallocate(io.offset(), io.length(), durable);
            default -> NvmeStatus.INTERNAL_ERROR;
        };
    }

    /**
     * Reads and writes so far that went through a bounce buffer (a worker's, or for writes a ring's) and its extra
     * copy, because the buffer
     * had no address or, with {@code directIo}, was not aligned to {@value #DIRECT_ALIGNMENT} bytes (NVMe/TCP
     * reads and writes with R2T come in aligned buffers; in-capsule write data is where the socket put it).
     */
    public long bouncedIos() {
        return bounced.get();
    }

    @Override
    public boolean wantsAlignedBuffers() {
        return directIo;
    }

    /** The buffer's own address when the kernel can use it in place, else 0 (go through the bounce buffer). */
    private long directAddress(ByteBuf b) {
        if (!b.hasMemoryAddress()) {
            return 0;
        }
        long a = b.memoryAddress();
        return directIo && (a & (DIRECT_ALIGNMENT - 1)) != 0 ? 0 : a;
    }

    private int doRead(BdevIo io, FileIoQueue.Worker w) {
        ByteBuf dst = io.buffer();
        long off = io.offset();
        int len = io.length();
        long a = directAddress(dst);
        int rc = a == 0 ? readBounced(dst, off, len, w) : FileNative.pread(fd, a, len, off);
        if (rc == -FileNative.EINVAL && a != 0 && directIo) {
            rc = readBounced(dst, off, len, w); // O_DIRECT refused the buffer's alignment
        }
        return rc < 0 ? readFailed(rc, off, len) : NvmeStatus.SUCCESS;
    }

    private int readFailed(int rc, long off, int len) {
        LOG.warn("file bdev {}: read of {} bytes at {} failed: {}", name(), len, off, FileNative.strerror(rc));
        return BdevErrors.status(OP_READ, rc);
    }

    private int readBounced(ByteBuf dst, long off, int len, FileIoQueue.Worker w) {
        bounced.incrementAndGet();
        ByteBuffer b = w.bounce();
        int done = 0;
        while (done < len) {
            int n = Math.min(len - done, b.capacity());
            int rc = FileNative.pread(fd, w.bounceAddress(), n, off + done);
            if (rc < 0) {
                return rc;
            }
            b.clear().limit(n);
            dst.setBytes(done, b);
            done += n;
        }
        return len;
    }

    private int doWrite(BdevIo io, boolean durable, FileIoQueue.Worker w) {
        ByteBuf src = io.buffer();
        long off = io.offset();
        int len = io.length();
        long a = directAddress(src);
        int rc = a == 0 ? writeBounced(src, off, len, durable, w) : FileNative.pwrite(fd, a, len, off, durable);
        if (rc == -FileNative.EINVAL && a != 0 && directIo) {
            rc = writeBounced(src, off, len, durable, w); // O_DIRECT refused the buffer's alignment
        }
        return rc >= 0 ? NvmeStatus.SUCCESS : writeFailed(io, durable, rc);
    }

    /** The status of a write that failed with {@code rc}: Capacity Exceeded, a durability error, or another error. */
    private int writeFailed(BdevIo io, boolean durable, int rc) {
        long off = io.offset();
        int len = io.length();
        if (rc == -FileNative.ENOSPC && !durable) {
            // a write into the page cache found no room for its blocks: nothing was written and nothing
            // earlier is lost, so only this write fails (Capacity Exceeded). A durable write's ENOSPC may come
            // from its sync half, i.e. from write-back of earlier data: that stays a durability error.
            LOG.warn("file bdev {}: write of {} bytes at {}: no space left on the file system of {}", name(), len,
                off, path);
            return BdevErrors.status(OP_WRITE, rc);
        }
        if (durable) {
            return durabilityError(io.fua() ? "write with FUA" : "write-through write", rc, off, len);
        }
        LOG.warn("file bdev {}: write of {} bytes at {} failed: {}", name(), len, off, FileNative.strerror(rc));
        return BdevErrors.status(OP_WRITE, rc);
    }

    private int writeBounced(ByteBuf src, long off, int len, boolean durable, FileIoQueue.Worker w) {
        bounced.incrementAndGet();
        ByteBuffer b = w.bounce();
        int done = 0;
        while (done < len) {
            int n = Math.min(len - done, b.capacity());
            b.clear().limit(n);
            src.getBytes(done, b);
            int rc = FileNative.pwrite(fd, w.bounceAddress(), n, off + done, durable);
            if (rc < 0) {
                return rc;
            }
            done += n;
        }
        return len;
    }

    private int doFlush() {
        int rc = FileNative.fdatasync(fd);
        return rc == 0 ? NvmeStatus.SUCCESS : durabilityError("fdatasync", rc, 0, 0);
    }

    /**
     * Counts a failed attempt to make data durable and, the first time, makes the device fail every later
     * write and flush (logged once, at ERROR). Any error counts, whatever its errno: the one an
     * {@code fdatasync} (or the sync half of RWF_DSYNC) reports may belong to pages written long before.
     */
    private int durabilityError(String what, int rc, long off, long len) {
        durabilityErrors.incrementAndGet();
        if (sticky.compareAndSet(NvmeStatus.SUCCESS, STICKY_STATUS)) {
            LOG.error("file bdev {}: {}{} on {} failed: {}. Writes acknowledged before may be lost (the kernel"
                    + " drops pages it could not write back), so every later write and flush on this device fails"
                    + " with Write Fault until the bdev is created again", name(), what,
                len == 0 ? "" : " of " + len + " bytes at " + off, path, FileNative.strerror(rc));
        }
        return sticky.get();
    }

    /** Write Zeroes: a zeroed range (file: ZERO_RANGE, else a hole; block device: BLKZEROOUT), else zeros. */
    private int doWriteZeroes(long off, long len, boolean durable) {
        int rc = -FileNative.EOPNOTSUPP;
        if (blockDevice) {
            rc = FileNative.blkZeroout(fd, off, len);
        } else {
            if (zeroRanges) {
                rc = FileNative.zeroRange(fd, off, len);
                if (FileNative.unsupported(rc)) {
                    zeroRanges = false;
                    LOG.info("file bdev {}: the file system of {} cannot zero ranges; Write Zeroes punches holes"
                        + " or writes zeros", name(), path);
                }
            }
            if (FileNative.unsupported(rc) && punchHoles) {
                rc = punch(off, len);
            }
        }
        if (FileNative.unsupported(rc)) {
            rc = writeZeros(off, len, false);
        }
        return finishZeroing("zeroing", rc, off, len, durable);
    }

    /** Deallocate: a hole in a file, BLKDISCARD on a block device; zeros where neither is possible. */
    private int doDeallocate(long off, long len, boolean durable) {
        int rc = -FileNative.EOPNOTSUPP;
        if (blockDevice) {
            rc = limits.deallocate() ? FileNative.blkDiscard(fd, off, len) : FileNative.blkZeroout(fd, off, len);
        } else if (punchHoles) {
            rc = punch(off, len);
        }
        if (FileNative.unsupported(rc)) {
            rc = writeZeros(off, len, false);
        }
        return finishZeroing("deallocate", rc, off, len, durable);
    }

    private int punch(long off, long len) {
        int rc = FileNative.punchHole(fd, off, len);
        if (FileNative.unsupported(rc)) {
            punchHoles = false;
            LOG.warn("file bdev {}: the file system of {} refused to punch a hole; Deallocate writes zeros"
                + " from now on", name(), path);
        }
        return rc;
    }

    /** With the write cache off the zeroed range is made durable too. */
    private int finishZeroing(String what, int rc, long off, long len, boolean durable) {
        if (rc < 0) {
            return zeroingFailed(what, rc, off, len);
        }
        if (durable) {
            int sync = FileNative.fdatasync(fd);
            if (sync < 0) {
                return durabilityError(what + " (write-through)", sync, off, len);
            }
        }
        return NvmeStatus.SUCCESS;
    }

    private int zeroingFailed(String what, int rc, long off, long len) {
        LOG.warn("file bdev {}: {} of {} bytes at {} failed: {}", name(), what, len, off, FileNative.strerror(rc));
        return BdevErrors.status(OP_WRITE_ZEROES, rc);
    }

    /** Writes zeros over the range from the shared zero buffer, {@link #ZERO_CHUNK} bytes at a time. */
    private int writeZeros(long off, long len, boolean durable) {
        long done = 0;
        while (done < len) {
            int n = (int) Math.min(len - done, ZERO_CHUNK);
            int rc = FileNative.pwrite(fd, zerosAddress, n, off + done, durable);
            if (rc < 0) {
                return rc;
            }
            done += n;
        }
        return 0;
    }

    /**
     * Waits until none of this device's operations is on a ring (none is, when the contract of {@link #close()} is
     * kept: no I/O outstanding); on a poll group's thread its own ring is polled meanwhile.
     */
    private void awaitRings() {
        long logAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ringInFlight.get() > 0) {
            FileRing own = FileRing.current();
            if (own != null) {
                own.poll();
            } else {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
            }
            if (System.nanoTime() - logAt > 0) {
                LOG.warn("file bdev {}: still waiting for {} operation(s) on the poll groups' io_uring rings", name(),
                    ringInFlight.get());
                logAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            }
        }
    }

    @Override
    public synchronized void grow(long newNumBlocks) {
        long bytes = newNumBlocks * blockSize();
        long size = FileNative.size(fd);
        if (size < 0) {
            throw new BdevException("file bdev " + name() + ": cannot grow " + path + ": " + FileNative.strerror((int) size));
        }
        if (size < bytes) {
            if (blockDevice) {
                throw new BdevException("file bdev " + name() + ": block device " + path + " is smaller than "
                    + bytes + " bytes");
            }
            int rc = FileNative.setSize(fd, bytes);
            if (rc < 0) {
                throw new BdevException("file bdev " + name() + ": cannot grow " + path + ": " + FileNative.strerror(rc));
            }
        }
        setNumBlocks(newNumBlocks);
    }

    /** Waits for every outstanding I/O, makes the data durable, and closes the file. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closing = true;
        awaitRings(); // first: a ring operation may still move to the workers
        queue.close();
        try {
            int rc = FileNative.fdatasync(fd);
            if (rc < 0) {
                durabilityError("final fdatasync", rc, 0, 0);
            }
        } finally {
            FileNative.close(fd);
        }
    }
}
