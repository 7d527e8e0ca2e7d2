package io.nvmf4j.spdk;

/** SPDK refused or failed a call: the negated errno SPDK gave and a message (with SPDK's own error lines). */
public final class SpdkException extends RuntimeException {
    private final int errno;

    public SpdkException(int negErrno, String message) {
        super(message);
        this.errno = Math.abs(negErrno);
    }

    /** The (positive) errno. */
    public int errno() {
        return errno;
    }
}
