package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One {@link BdevIo} for driving a {@link BlockDevice} directly: a pooled direct buffer of
 * {@code length} bytes (released by {@link #close()}), and a record of every completion call, so a
 * test can check that exactly one arrived and on which path.
 */
final class TestIo implements BdevIo, AutoCloseable {
    private final long offset;
    private final int length;
    private final ByteBuf buffer;
    /** What {@link #buffer} is a slice of (the allocation {@link #close()} releases). */
    private final ByteBuf allocated;
    private final CompletableFuture<Integer> done = new CompletableFuture<>();
    final AtomicInteger syncCompletions = new AtomicInteger();
    final AtomicInteger asyncCompletions = new AtomicInteger();
    volatile Thread completionThread;
    /** Order of this completion among all TestIo completions (from {@link #SEQUENCE}). */
    volatile long completionSeq;
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private boolean fua;

    private TestIo(long offset, int length, int bufferLength) {
        this(offset, length, bufferLength, false);
    }

    /** {@code odd}: the buffer starts at an odd address (else where the allocator put it). */
    private TestIo(long offset, int length, int bufferLength, boolean odd) {
        this.offset = offset;
        this.length = length;
        int n = Math.max(bufferLength, 1);
        this.allocated = PooledByteBufAllocator.DEFAULT.directBuffer(odd ? n + 1 : n);
        allocated.setZero(0, allocated.capacity());
        this.buffer = odd ? allocated.slice((int) (1 - (allocated.memoryAddress() & 1)), n) : allocated;
    }

    private TestIo(long offset, int length) {
        this(offset, length, length);
    }

    /** An I/O over a range that carries no data (Deallocate, Write Zeroes): its buffer is one byte. */
    static TestIo range(long offset, int length) {
        return new TestIo(offset, length, 1);
    }

    /** An I/O whose buffer holds zeros (for reads, flushes, zeroing). */
    static TestIo of(long offset, int length) {
        return new TestIo(offset, length);
    }

    /** An I/O whose buffer holds {@code data} (for writes). */
    static TestIo of(long offset, byte[] data) {
        TestIo io = new TestIo(offset, data.length);
        io.buffer.setBytes(0, data);
        return io;
    }

    /**
     * An I/O whose buffer holds {@code data} at an address that is odd, so never aligned as O_DIRECT needs (in-capsule
     * write data lies where the socket put it).
     */
    static TestIo unaligned(long offset, byte[] data) {
        TestIo io = new TestIo(offset, data.length, data.length, true);
        io.buffer.setBytes(0, data);
        return io;
    }

    /** Sets Force Unit Access on this I/O (a write that must be durable before it completes). */
    TestIo withFua() {
        fua = true;
        return this;
    }

    /**
     * Writes {@code data} at byte {@code offset} and returns the completion status (a file bdev on the io_uring path
     * is called from its poll group: {@link IoPath#on}).
     */
    static int write(BlockDevice d, long offset, byte[] data) {
        try (TestIo io = of(offset, data)) {
            IoPath.on(d).write(io);
            return io.await();
        }
    }

    /** Reads {@code length} bytes at byte {@code offset}; fails unless the status is SUCCESS. */
    static byte[] read(BlockDevice d, long offset, int length) {
        try (TestIo io = of(offset, length)) {
            io.buffer().setBytes(0, filler(length));
            IoPath.on(d).read(io);
            int status = io.await();
            if (status != 0) {
                throw new AssertionError("read of " + length + " bytes at " + offset + ": status 0x"
                    + Integer.toHexString(status));
            }
            return io.data();
        }
    }

    /** Non-zero bytes put into read buffers first, so a read that leaves the buffer alone cannot pass as zeros. */
    private static byte[] filler(int length) {
        byte[] b = new byte[length];
        java.util.Arrays.fill(b, (byte) 0xA5);
        return b;
    }

    static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public ByteBuf buffer() {
        return buffer;
    }

    @Override
    public boolean fua() {
        return fua;
    }

    @Override
    public void bdevComplete(int status) {
        syncCompletions.incrementAndGet();
        record(status);
    }

    @Override
    public void bdevCompleteAsync(int status) {
        asyncCompletions.incrementAndGet();
        record(status);
    }

    private void record(int status) {
        completionThread = Thread.currentThread();
        completionSeq = SEQUENCE.incrementAndGet();
        done.complete(status);
    }

    boolean isDone() {
        return done.isDone();
    }

    int completions() {
        return syncCompletions.get() + asyncCompletions.get();
    }

    /** Waits for the completion and returns its NVMe status. */
    int await() {
        return await(5);
    }

    /** The status, waiting up to {@code seconds} for the device to complete the I/O. */
    int await(int seconds) {
        try {
            return done.get(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("the block device never completed the I/O at " + offset + " (" + length
                + " bytes): " + e);
        }
    }

    /** The first {@link #length()} bytes of the buffer. */
    byte[] data() {
        byte[] b = new byte[length];
        buffer.getBytes(0, b);
        return b;
    }

    @Override
    public void close() {
        allocated.release();
    }
}
