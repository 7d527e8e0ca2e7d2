package io.nvmf4j.storage;

import io.nvmf4j.os.FileNative;

/** A block device could not be created or opened (bad path, size, permissions). */
public final class BdevException extends RuntimeException {
    public BdevException(String message) {
        super(message);
    }

    public BdevException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Throws naming the device and the cause unless {@code libnvmf4j_bdev} is loaded. */
    public static void requireFileNative(String what) {
        String failure = FileNative.failure();
        if (failure != null) {
            throw new BdevException(what + ": " + failure);
        }
    }
}
