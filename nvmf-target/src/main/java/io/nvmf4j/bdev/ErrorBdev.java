package io.nvmf4j.bdev;

import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.Locale;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Fault injection: passes every operation to its base device except those an {@link ErrorInjection} picks, which
 * fail as a broken device would, through {@link BdevErrors#status} like any backend error. Modelled on SPDK's
 * error bdev ({@code bdev_error_create}, {@code bdev_error_inject_error} with an I/O type, an error type and
 * a count of commands to fail); our error types name the failure rather than SPDK's bdev status:
 *
 * <ul>
 *   <li>{@code eio}: the medium failed (EIO): Unrecovered Read Error for reads, Write Fault for writes.</li>
 *   <li>{@code nospc}: no room for the blocks (ENOSPC): Capacity Exceeded.</li>
 *   <li>{@code gone}: the device went away (ENODEV): Namespace Not Ready with DNR.</li>
 *   <li>{@code timeout}: the command is held for {@code timeoutMs} (SPDK's "pending") and then fails with
 *       ETIMEDOUT: Command Interrupted (retryable). It never reaches the base device. At most
 *       {@code maxHeldCommands} are held at once; one more fails at once with the same status (logged, counted
 *       in {@link #refusedHolds()}), so a host cannot make the device hold unbounded memory.</li>
 * </ul>
 * An injection fails the next {@code count} commands of its I/O type ({@code read}, {@code write},
 * {@code flush}, {@code write-zeroes}, {@code deallocate} or {@code all}); count 0 fails them until
 * {@link #clear()}. A new injection for an I/O type replaces the one before. Injections live in memory only:
 * a restart starts clean (a failure that survived a restart would be a trap).
 *
 * <p>Thread safety: injections are set from the control thread; the data path reads them from poll-group
 * threads (one atomic read per operation, no allocation). Held commands complete from this device's own
 * timer thread through {@link BdevIo#bdevCompleteAsync}; {@link #close()} completes every one still held with
 * Command Aborted due to SQ Deletion (the device goes away with the queues), each exactly once.
 */
public final class ErrorBdev implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorBdev.class);
    private static final String[] IO_TYPES = ErrorInjection.IO_TYPES.toArray(String[]::new);

    /** An active injection: its errno and the commands it may still fail (-1: unlimited). */
    private record Active(ErrorInjection injection, int errno, AtomicInteger remaining) {
    }

    private final String name;
    private final BlockDevice base;
    private final AtomicReferenceArray<Active> active = new AtomicReferenceArray<>(IO_TYPES.length);
    private final int maxHeld;
    /** The commands held now; each leaves exactly once (its timer or close), completed by whoever removes it. */
    private final Set<BdevIo> held = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
    private final AtomicInteger holding = new AtomicInteger();
    private final AtomicInteger refusedHolds = new AtomicInteger();
    private volatile boolean closed;
    private volatile ScheduledThreadPoolExecutor timer;

    public ErrorBdev(String name, BlockDevice base) {
        this(name, base, io.nvmf4j.config.BdevConfig.DEFAULT_MAX_HELD_COMMANDS);
    }

    /** An error bdev over {@code base} that holds at most {@code maxHeld} commands at once. */
    public ErrorBdev(String name, BlockDevice base, int maxHeld) {
        if (maxHeld < 1) {
            throw new IllegalArgumentException("maxHeld must be at least 1, got " + maxHeld);
        }
        this.name = name;
        this.base = base;
        this.maxHeld = maxHeld;
    }

    /** Starts failing commands as {@code i} says; throws {@link BdevException} with the reason when invalid. */
    public void inject(ErrorInjection i) {
        String problem = i.problem();
        if (problem != null) {
            throw new BdevException("error bdev " + name + ": " + problem);
        }
        int errno = switch (i.errorType()) {
            case "eio" -> BdevErrors.EIO;
            case "nospc" -> BdevErrors.ENOSPC;
            case "gone" -> BdevErrors.ENODEV;
            default -> BdevErrors.ETIMEDOUT;
        };
        for (int op = 0; op < IO_TYPES.length; op++) {
            if ("all".equals(i.ioType()) || IO_TYPES[op].equals(i.ioType())) {
                active.set(op, new Active(i, errno, new AtomicInteger(i.count() == 0 ? -1 : i.count())));
            }
        }
        LOG.warn("error bdev {}: injecting {} into {} {}", name, i.errorType(), i.count() == 0 ? "every" : i.count(),
            i.ioType().equals("all") ? "command" : i.ioType() + " command(s)");
    }

    /** Stops every injection; held commands still fail when their time is up. */
    public void clear() {
        for (int op = 0; op < IO_TYPES.length; op++) {
            active.set(op, null);
        }
        LOG.info("error bdev {}: injections cleared", name);
    }

    /** The injections still active (count = commands left to fail, 0 for unlimited), for the API. */
    public List<ErrorInjection> injections() {
        List<ErrorInjection> l = new ArrayList<>();
        for (int op = 0; op < IO_TYPES.length; op++) {
            Active a = active.get(op);
            if (a != null && a.remaining.get() != 0) {
                int left = Math.max(0, a.remaining.get());
                l.add(new ErrorInjection(IO_TYPES[op], a.injection.errorType(), left, a.injection.timeoutMs()));
            }
        }
        return l;
    }

    /** Commands held by a {@code timeout} injection right now. */
    public int heldCommands() {
        return holding.get();
    }

    /** Commands a {@code timeout} injection failed at once because {@code maxHeldCommands} were held already. */
    public int refusedHolds() {
        return refusedHolds.get();
    }

    public BlockDevice base() {
        return base;
    }

    /** True when {@code io} was failed (or held) by an injection; false: pass it on. */
    private boolean injected(int op, BdevIo io) {
        Active a = active.get(op);
        if (a == null) {
            return false;
        }
        int left = a.remaining.get();
        while (left != -1) {
            if (left == 0) {
                return false;
            }
            if (a.remaining.compareAndSet(left, left - 1)) {
                break;
            }
            left = a.remaining.get();
        }
        int status = BdevErrors.status(op, a.errno);
        if (a.errno == BdevErrors.ETIMEDOUT) {
            hold(io, status, a.injection.timeoutMs());
        } else {
            io.bdevComplete(status);
        }
        return true;
    }

    /** Holds {@code io} for {@code ms}, then fails it with {@code status}; beyond maxHeld or once closed: now. */
    private void hold(BdevIo io, int status, long ms) {
        if (closed) {
            io.bdevComplete(NvmeStatus.ABORTED_SQ_DELETION);
            return;
        }
        if (holding.incrementAndGet() > maxHeld) {
            holding.decrementAndGet();
            if (refusedHolds.getAndIncrement() == 0) {
                LOG.warn("error bdev {}: {} commands held already (maxHeldCommands); further timeout injections "
                    + "fail at once with Command Interrupted", name, maxHeld);
            }
            io.bdevComplete(status);
            return;
        }
        held.add(io);
        try {
            timer().schedule(() -> release(io, status), ms, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            release(io, NvmeStatus.ABORTED_SQ_DELETION); // closed meanwhile
        }
    }

    /** Completes {@code io} with {@code status} if it is still held (the timer and close race: one wins). */
    private void release(BdevIo io, int status) {
        if (held.remove(io)) {
            holding.decrementAndGet();
            io.bdevCompleteAsync(status);
        }
    }

    private ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor t = timer;
        if (t == null) {
            synchronized (this) {
                t = timer;
                if (closed) {
                    throw new java.util.concurrent.RejectedExecutionException("error bdev " + name + " is closed");
                }
                if (t == null) {
                    t = new ScheduledThreadPoolExecutor(1, r -> {
                        Thread th = new Thread(r, "error-bdev-" + name);
                        th.setDaemon(true);
                        return th;
                    });
                    timer = t;
                }
            }
        }
        return t;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int blockSize() {
        return base.blockSize();
    }

    @Override
    public long numBlocks() {
        return base.numBlocks();
    }

    @Override
    public void read(BdevIo io) {
        if (!injected(BdevErrors.OP_READ, io)) {
            base.read(io);
        }
    }

    @Override
    public void write(BdevIo io) {
        if (!injected(BdevErrors.OP_WRITE, io)) {
            base.write(io);
        }
    }

    @Override
    public void flush(BdevIo io) {
        if (!injected(BdevErrors.OP_FLUSH, io)) {
            base.flush(io);
        }
    }

    @Override
    public void writeZeroes(BdevIo io) {
        if (!injected(BdevErrors.OP_WRITE_ZEROES, io)) {
            base.writeZeroes(io);
        }
    }

    @Override
    public void deallocate(BdevIo io) {
        if (!injected(BdevErrors.OP_DEALLOCATE, io)) {
            base.deallocate(io);
        }
    }

    @Override
    public void grow(long newNumBlocks) {
        base.grow(newNumBlocks);
    }

    @Override
    public boolean persistent() {
        return base.persistent();
    }

    @Override
    public boolean volatileCache() {
        return base.volatileCache();
    }

    @Override
    public boolean writeCacheEnabled() {
        return base.writeCacheEnabled();
    }

    @Override
    public void setWriteCacheEnabled(boolean enabled) {
        base.setWriteCacheEnabled(enabled);
    }

    @Override
    public DiscardLimits discardLimits() {
        return base.discardLimits();
    }

    @Override
    public int stickyErrorStatus() {
        return base.stickyErrorStatus();
    }

    @Override
    public long durabilityErrors() {
        return base.durabilityErrors();
    }

    /**
     * Stops the timer and completes every command still held with Command Aborted due to SQ Deletion (through
     * {@link BdevIo#bdevCompleteAsync}, so its buffers return and its queue drains); a command injected after
     * this fails at once the same way. The base device stays open: it is a bdev of its own.
     */
    @Override
    public void close() {
        closed = true;
        ScheduledThreadPoolExecutor t;
        synchronized (this) {
            t = timer;
        }
        if (t != null) {
            t.shutdownNow();
        }
        List<BdevIo> left;
        synchronized (held) {
            left = new ArrayList<>(held);
        }
        for (BdevIo io : left) {
            release(io, NvmeStatus.ABORTED_SQ_DELETION);
        }
        if (!left.isEmpty()) {
            LOG.info("error bdev {}: closed with {} held command(s), failed with Command Aborted due to SQ Deletion",
                name, left.size());
        }
    }

    @Override
    public String toString() {
        return "error bdev " + name + " over " + base.name() + " " + injections().toString().toLowerCase(Locale.ROOT);
    }
}
