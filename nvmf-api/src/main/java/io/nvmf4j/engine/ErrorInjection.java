package io.nvmf4j.engine;

import java.util.List;

/**
 * One error injection of an error bdev (the API's {@code POST /bdevs/{name}/errors}).
 *
 * @param ioType    read, write, flush, write-zeroes, deallocate or all
 * @param errorType eio, nospc, gone or timeout
 * @param count     commands to fail (0: every one until cleared)
 * @param timeoutMs {@code timeout} only: how long a command is held before it fails
 */
public record ErrorInjection(String ioType, String errorType, int count, long timeoutMs) {
    /** The I/O types an injection can name besides {@code all}, in the error bdev's order. */
    public static final List<String> IO_TYPES = List.of("read", "write", "flush", "write-zeroes", "deallocate");
    public static final List<String> ERROR_TYPES = List.of("eio", "nospc", "gone", "timeout");
    public static final long MAX_TIMEOUT_MS = 600_000;

    /** Null when valid, else what is wrong (one sentence). */
    public String problem() {
        if (ioType == null || !("all".equals(ioType) || IO_TYPES.contains(ioType))) {
            return "ioType must be read, write, flush, write-zeroes, deallocate or all, got " + ioType;
        }
        if (errorType == null || !ERROR_TYPES.contains(errorType)) {
            return "errorType must be eio, nospc, gone or timeout, got " + errorType;
        }
        if (count < 0) {
            return "count must be 0 (until cleared) or more, got " + count;
        }
        if ("timeout".equals(errorType) ? timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS : timeoutMs != 0) {
            return "timeout".equals(errorType) ? "timeoutMs must be 1.." + MAX_TIMEOUT_MS + ", got " + timeoutMs
                : "timeoutMs is for errorType timeout only";
        }
        return null;
    }
}
