package io.nvmf4j.cli;

/**
 * A failure nvmfctl reports as one line on stderr and an exit code: {@link #API} for an API refusal
 * (4xx), {@link #USAGE} for a bad command line or an unreadable local file, {@link #UNAVAILABLE} when the
 * service cannot be reached or fails (5xx). Never carries a stack trace to the user.
 */
final class CliException extends RuntimeException {
    static final int API = 1;
    static final int USAGE = 2;
    static final int UNAVAILABLE = 3;

    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    static CliException usage(String message) {
        return new CliException(USAGE, message);
    }

    int exitCode() {
        return exitCode;
    }
}
