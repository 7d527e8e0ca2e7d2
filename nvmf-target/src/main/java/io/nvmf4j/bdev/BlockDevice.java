package io.nvmf4j.bdev;

/**
 * A block device behind a namespace. Offsets and lengths are in bytes and block-aligned (the
 * command layer checks ranges before calling). Every call ends in exactly one
 * completion: synchronous devices call {@link BdevIo#bdevComplete(int)} before returning,
 * asynchronous ones call {@link BdevIo#bdevCompleteAsync(int)} from their own thread.
 */
public interface BlockDevice extends AutoCloseable {
    String name();

    /** Logical block size in bytes (512 or 4096). */
    int blockSize();

    long numBlocks();

    /** Reads {@code io.length()} bytes at {@code io.offset()} into {@code io.buffer()} from index 0. */
    void read(BdevIo io);

    /** Writes {@code io.length()} bytes from {@code io.buffer()} (index 0) at {@code io.offset()}. */
    void write(BdevIo io);

    /** Makes every completed write durable. */
    void flush(BdevIo io);

    /** Writes zeros over [offset, offset + length). */
    void writeZeroes(BdevIo io);

    /** Deallocates [offset, offset + length): later reads return zeros (the range is freed where the medium can). */
    void deallocate(BdevIo io);

    /**
     * Grows the device to {@code newNumBlocks} (more than now); existing data stays. Devices that cannot
     * grow throw {@link BdevException} with the reason.
     */
    void grow(long newNumBlocks);

    /** Whether data survives the process (a volatile write cache is reported for these). */
    boolean persistent();

    /** Flushes and releases resources; called once, when no I/O is outstanding. */
    @Override
    void close();
}
