package io.nvmf4j.it;

import io.nvmf4j.bdev.BdevIo;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.DiscardLimits;
import io.nvmf4j.nvme.NvmeStatus;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;

/**
 * A block device for testing the command layer: it keeps written blocks in a volatile cache until a flush
 * (or FUA, or a disabled write cache) makes them stable, records every call with its arguments, and lets a
 * test set its discard limits, its sticky durability error and hold its flushes until the test lets them go (then
 * they complete from its own thread, as an asynchronous device does). Thread-safe (poll-group thread and test
 * thread).
 */
final class RecordingBdev implements BlockDevice {
    /** One call as the device saw it. */
    record Call(String op, long offset, int length, boolean fua) {
    }

    private final String name;
    private final int blockSize;
    private final long numBlocks;
    private final Map<Long, byte[]> cache = new HashMap<>();
    private final Map<Long, byte[]> stable = new HashMap<>();
    private final List<Call> calls = new ArrayList<>();
    private final ExecutorService flusher = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "recording-bdev-flush");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean writeCache = true;
    private volatile boolean persistent = true;
    private volatile DiscardLimits limits = new DiscardLimits(true, true, true, false, 256, 0, 0);
    private volatile int stickyStatus = NvmeStatus.SUCCESS;
    private volatile long durabilityErrors;
    /** While set, flushes wait (on {@link #flusher}) until it is counted down. */
    private volatile CountDownLatch flushGate;
    private volatile Error flushFailure;

    RecordingBdev(String name, int blockSize, long numBlocks) {
        this.name = name;
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
    }

    // ---- test controls and observations

    /** Every later flush throws {@code e} on the thread that submitted it (a poll group's), as a device out of memory would. */
    void failFlushesWith(Error e) {
        flushFailure = e;
    }

    void limits(DiscardLimits l) {
        limits = l;
    }

    /** False: a device without a volatile cache (as a RAM device), so Identify VWC does not count it. */
    void persistent(boolean p) {
        persistent = p;
    }

    void failDurability(int status, long errors) {
        stickyStatus = status;
        durabilityErrors = errors;
    }

    /**
     * Flushes from now on wait until the returned latch is counted down, on the device's own thread, then complete
     * from there: a device whose flush is in progress for exactly as long as the test needs, on any machine.
     */
    CountDownLatch holdFlushes() {
        CountDownLatch gate = new CountDownLatch(1);
        flushGate = gate;
        return gate;
    }

    synchronized List<Call> calls() {
        return List.copyOf(calls);
    }

    synchronized List<Call> calls(String op) {
        return calls.stream().filter(c -> c.op().equals(op)).toList();
    }

    /** Bytes of block {@code lba} that would survive a power cut now, or null. */
    synchronized byte[] stableBlock(long lba) {
        return stable.get(lba * blockSize);
    }

    synchronized byte[] cachedBlock(long lba) {
        return cache.get(lba * blockSize);
    }

    // ---- BlockDevice

    @Override
    public String name() {
        return name;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long numBlocks() {
        return numBlocks;
    }

    @Override
    public void read(BdevIo io) {
        synchronized (this) {
            calls.add(new Call("read", io.offset(), io.length(), false));
            for (int off = 0; off < io.length(); off += blockSize) {
                byte[] b = cache.getOrDefault(io.offset() + off, stable.get(io.offset() + off));
                if (b == null) {
                    io.buffer().setZero(off, blockSize);
                } else {
                    io.buffer().setBytes(off, b);
                }
            }
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void write(BdevIo io) {
        synchronized (this) {
            calls.add(new Call("write", io.offset(), io.length(), io.fua()));
            boolean durable = io.fua() || !writeCache;
            for (int off = 0; off < io.length(); off += blockSize) {
                byte[] b = new byte[blockSize];
                io.buffer().getBytes(off, b);
                if (durable) {
                    cache.remove(io.offset() + off);
                    stable.put(io.offset() + off, b);
                } else {
                    cache.put(io.offset() + off, b);
                }
            }
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void flush(BdevIo io) {
        Error failure = flushFailure;
        if (failure != null) {
            throw failure;
        }
        synchronized (this) {
            calls.add(new Call("flush", 0, 0, false));
        }
        CountDownLatch gate = flushGate;
        if (gate == null) {
            writeBack();
            io.bdevComplete(NvmeStatus.SUCCESS);
        } else {
            flusher.execute(() -> {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    return; // the device closed: the flush never completes, as on a device that went away
                }
                writeBack();
                io.bdevCompleteAsync(NvmeStatus.SUCCESS);
            });
        }
    }

    private synchronized void writeBack() {
        stable.putAll(cache);
        cache.clear();
        calls.add(new Call("flushed", 0, 0, false));
    }

    @Override
    public void writeZeroes(BdevIo io) {
        synchronized (this) {
            calls.add(new Call("writeZeroes", io.offset(), io.length(), io.fua()));
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void deallocate(BdevIo io) {
        synchronized (this) {
            calls.add(new Call("deallocate", io.offset(), io.length(), false));
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void grow(long newNumBlocks) {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean persistent() {
        return persistent;
    }

    @Override
    public boolean writeCacheEnabled() {
        return writeCache;
    }

    @Override
    public void setWriteCacheEnabled(boolean enabled) {
        synchronized (this) {
            calls.add(new Call("setWriteCache", enabled ? 1 : 0, 0, false));
        }
        writeCache = enabled;
    }

    @Override
    public DiscardLimits discardLimits() {
        return limits;
    }

    @Override
    public int stickyErrorStatus() {
        return stickyStatus;
    }

    @Override
    public long durabilityErrors() {
        return durabilityErrors;
    }

    @Override
    public void close() {
        flusher.shutdownNow();
    }
}
