package io.nvmf4j.bdev;

/** A block device could not be created or opened (bad path, size, permissions). */
public final class BdevException extends RuntimeException {
    public BdevException(String message) {
        super(message);
    }

    public BdevException(String message, Throwable cause) {
        super(message, cause);
    }
}
