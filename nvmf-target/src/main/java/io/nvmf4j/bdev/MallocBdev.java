package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;
import io.nvmf4j.storage.BdevException;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import io.nvmf4j.nvme.NvmeStatus;

/**
 * Off-heap RAM block device: one native allocation of {@code blockSize * numBlocks} bytes, zeroed at
 * creation, copied to and from the request buffers by address. Completes synchronously on the
 * caller's thread and allocates nothing per I/O.
 *
 * <p>Deallocate and Write Zeroes zero the range (reads of deallocated blocks return zeros, DLFEAT 001b); the
 * memory stays allocated, so nothing is freed and Write Zeroes' DEAC has nothing to add. No limits: the command
 * layer hands long ranges over in pieces of a few MiB and yields between them.
 */
public final class MallocBdev extends AbstractBdev {
    private final long size;
    private volatile long address;
    /** The memory is {@link FileNative#mapAnonymous}'s (else Unsafe's allocateMemory: no native library). */
    private final boolean mapped;

    public MallocBdev(String name, int blockSize, long numBlocks) {
        super(name, blockSize, numBlocks);
        if (!PlatformDependent.hasUnsafe()) {
            throw new BdevException("malloc bdev " + name + ": needs sun.misc.Unsafe, which this JVM denies: "
                + PlatformDependent.getUnsafeUnavailabilityCause());
        }
        this.size = Math.multiplyExact((long) blockSize, numBlocks);
        // transparent huge pages where the kernel gives them (as SPDK's malloc bdev lives in hugepages): a random
        // 4 KiB read of ordinary pages misses the TLB and walks the page tables (twice over in a VM), which makes
        // the copy slower (docs/benchmarks-history.md, "A malloc namespace in huge pages", has the figures)
        long a = FileNative.loaded() ? FileNative.mapAnonymous(size, true) : -1;
        this.mapped = a > 0;
        try {
            this.address = mapped ? a : PlatformDependent.allocateMemory(size);
        } catch (OutOfMemoryError e) {
            throw new BdevException("malloc bdev " + name + ": cannot allocate " + size + " bytes", e);
        }
        PlatformDependent.setMemory(address, size, (byte) 0); // every page touched now, not during I/O
    }

    /**
     * Copies of this many bytes up to {@link #NATIVE_COPY_MAX} go through libc's {@code memcpy}
     * ({@link FileNative#copy}) instead of the JVM's copy stub ({@code Unsafe.copyMemory}): between these lengths
     * glibc's vector copy is the faster of the two into the device (a cold destination), and about level out of it,
     * the JNI call included; at 2 KiB and below the call costs more than it saves, from 32 KiB on the two are level
     * or the stub is ahead (docs/benchmarks-history.md, "Copies of 4–16 KiB with libc's memcpy", has the figures).
     */
    static final int NATIVE_COPY_MIN = 4096;
    static final int NATIVE_COPY_MAX = 16384;

    private static final DiscardLimits LIMITS = new DiscardLimits(true, false, true, false, 256, 0, 0);

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public DiscardLimits discardLimits() {
        return LIMITS;
    }

    /** Refuses (instead of corrupting memory) a range outside the device or beyond the buffer. */
    private boolean outOfBounds(BdevIo io, ByteBuf buf) {
        long off = io.offset();
        int len = io.length();
        return address == 0 || off < 0 || len < 0 || off + len > size || (buf != null && len > buf.capacity());
    }

    @Override
    public void read(BdevIo io) {
        ByteBuf dst = io.buffer();
        if (outOfBounds(io, dst)) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        if (dst.hasMemoryAddress()) {
            copy(address + io.offset(), dst.memoryAddress(), io.length());
        } else {
            for (int i = 0; i < io.length(); i++) {
                dst.setByte(i, PlatformDependent.getByte(address + io.offset() + i));
            }
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void write(BdevIo io) {
        ByteBuf src = io.buffer();
        if (outOfBounds(io, src)) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        if (src.hasMemoryAddress()) {
            copy(src.memoryAddress(), address + io.offset(), io.length());
        } else {
            for (int i = 0; i < io.length(); i++) {
                PlatformDependent.putByte(address + io.offset() + i, src.getByte(i));
            }
        }
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    /** {@code length} bytes from {@code src} to {@code dst}, both checked; see {@link #NATIVE_COPY_MIN}. */
    private void copy(long src, long dst, int length) {
        if (mapped && length >= NATIVE_COPY_MIN && length <= NATIVE_COPY_MAX) {
            FileNative.copy(dst, src, length); // mapped: the library is loaded
        } else {
            PlatformDependent.copyMemory(src, dst, length);
        }
    }

    @Override
    public void flush(BdevIo io) {
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        if (outOfBounds(io, null)) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        PlatformDependent.setMemory(address + io.offset(), io.length(), (byte) 0);
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    @Override
    public void deallocate(BdevIo io) {
        if (outOfBounds(io, null)) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        PlatformDependent.setMemory(address + io.offset(), io.length(), (byte) 0);
        io.bdevComplete(NvmeStatus.SUCCESS);
    }

    /** The device's memory (tests: where it is mapped); 0 once closed. */
    /** The memory is the native library's mapping (so copies of 4-16 KiB use its memcpy). */
    boolean mapped() {
        return mapped;
    }

    long address() {
        return address;
    }

    @Override
    public void grow(long newNumBlocks) {
        throw new BdevException("malloc bdev " + name() + " cannot grow in place; add a new bdev instead");
    }

    @Override
    public synchronized void close() {
        if (address != 0) {
            if (mapped) {
                FileNative.unmap(address, size);
            } else {
                PlatformDependent.freeMemory(address);
            }
            address = 0;
        }
    }
}
