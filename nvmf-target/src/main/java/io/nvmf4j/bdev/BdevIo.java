package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;

/** One block-device operation, implemented by the request that carries it (no allocation per I/O). */
public interface BdevIo {
    long offset();

    int length();

    /** Data buffer (direct), used from index 0 to {@link #length()}. */
    ByteBuf buffer();

    /** Force Unit Access (Write, CDW12 bit 30): the write must be on stable media before it completes. */
    default boolean fua() {
        return false;
    }

    /** Completion on the submitter's thread: exactly one of the two completion calls, exactly once. */
    void bdevComplete(int status);

    /**
     * Completion from another thread (an asynchronous device's worker): the implementation hands it to
     * the submitter's poll group, which then runs {@link #bdevComplete(int)}.
     */
    void bdevCompleteAsync(int status);
}
