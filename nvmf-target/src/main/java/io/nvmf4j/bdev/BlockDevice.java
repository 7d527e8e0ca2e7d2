package io.nvmf4j.bdev;

/**
 * A block device behind a namespace. Offsets and lengths are in bytes and block-aligned (the
 * command layer checks ranges before calling). Every call ends in exactly one
 * completion: synchronous devices call {@link BdevIo#bdevComplete(int)} before returning,
 * asynchronous ones call {@link BdevIo#bdevCompleteAsync(int)} from their own thread, or
 * {@link BdevIo#bdevComplete(int)} later on the caller's own thread (a file bdev whose poll group reaps the
 * completion from its io_uring ring).
 */
public interface BlockDevice extends AutoCloseable {
    /**
     * The alignment of a data buffer's address that every device can use in place: a file opened with O_DIRECT
     * needs its buffers at a multiple of the logical block size of the disk under it (512 bytes for the disks
     * we serve from); other buffers cost it a copy through a bounce buffer. Transports that lay out a buffer
     * (NVMe/TCP reads) align the data to it.
     */
    int BUFFER_ALIGNMENT = 512;

    String name();

    /**
     * Whether data buffers at {@link #BUFFER_ALIGNMENT} save this device a copy (a file opened with O_DIRECT):
     * transports then align the buffers they allocate for its write data too, at the price of a larger buffer.
     */
    default boolean wantsAlignedBuffers() {
        return false;
    }

    /** Logical block size in bytes (512 or 4096). */
    int blockSize();

    long numBlocks();

    /** Reads {@code io.length()} bytes at {@code io.offset()} into {@code io.buffer()} from index 0. */
    void read(BdevIo io);

    /**
     * Writes {@code io.length()} bytes from {@code io.buffer()} (index 0) at {@code io.offset()}. When
     * {@link BdevIo#fua()} is set, or the write cache is disabled ({@link #setWriteCacheEnabled}), the
     * data is on stable media before the completion reports success.
     */
    void write(BdevIo io);

    /**
     * Makes every completed write durable. Once an attempt to make data durable has failed, the device
     * remembers it (as Linux's errseq does for a file) and fails this and every later flush and write
     * with {@link #stickyErrorStatus()}, since data acknowledged earlier may be gone.
     */
    void flush(BdevIo io);

    /** Writes zeros over [offset, offset + length); durable before it completes as {@link #write} says. */
    void writeZeroes(BdevIo io);

    /**
     * Deallocates [offset, offset + length): later reads return zeros (the range is freed where the medium can).
     * Durable before it completes as {@link #write} says (Write Zeroes with DEAC and FUA comes here).
     */
    void deallocate(BdevIo io);

    /**
     * Grows the device to {@code newNumBlocks} (more than now); existing data stays. Devices that cannot
     * grow throw {@link BdevException} with the reason.
     */
    void grow(long newNumBlocks);

    /**
     * Whether the device allocates its blocks as they are written (a thin volume): Identify Namespace then sets NSFEAT
     * bit 0 and reports {@link #allocatedBytes()} as NUSE.
     */
    default boolean thinProvisioned() {
        return false;
    }

    /** Bytes the device occupies on its medium now, or -1 when it cannot tell. */
    default long allocatedBytes() {
        return -1;
    }

    /** Whether data survives the process. */
    boolean persistent();

    /**
     * Whether the device has a volatile write cache at all (Identify's VWC): writes it completes may be lost until a
     * Flush. By default every persistent device (the file bdev: the page cache); a device whose completed writes are
     * already durable (an rbd image without librbd's cache) says false.
     */
    default boolean volatileCache() {
        return persistent();
    }

    /**
     * Whether writes may sit in a volatile cache until a Flush (the file bdev: the page cache). This is
     * the device's state, shared by every controller that reaches the device; Get Features 06h reports
     * it. Devices that are not {@link #persistent()} have no cache a Flush could save and report false.
     */
    default boolean writeCacheEnabled() {
        return false;
    }

    /**
     * Set Features 06h: turns the volatile write cache on or off. With it off every write is durable
     * before it completes (as if each carried FUA). A device without a volatile cache ignores it.
     */
    default void setWriteCacheEnabled(boolean enabled) {
        // nothing to switch
    }

    /** Deallocate and Write Zeroes behaviour and limits (see {@link DiscardLimits}). */
    default DiscardLimits discardLimits() {
        return new DiscardLimits(true, false, true, false, 256, 0, 0);
    }

    /**
     * {@link io.nvmf4j.nvme.NvmeStatus#SUCCESS} while no attempt to make data durable has failed; after
     * one, the status every later write and flush fails with (a failed {@code fdatasync} cannot be retried:
     * the kernel has dropped the dirty pages).
     */
    default int stickyErrorStatus() {
        return io.nvmf4j.nvme.NvmeStatus.SUCCESS;
    }

    /** Failed attempts to make data durable so far (for metrics and the SMART log's media errors). */
    default long durabilityErrors() {
        return 0;
    }

    /** Flushes and releases resources; called once, when no I/O is outstanding. */
    @Override
    void close();
}
