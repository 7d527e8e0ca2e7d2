package io.nvmf4j.runtime;

import io.netty.util.internal.OutOfDirectMemoryError;

/**
 * Errors that a framework caught instead of ending a thread with them: Netty hands an {@link Error} thrown in a
 * channel handler to {@code exceptionCaught} and ends an event loop on one thrown in its I/O handler, Vert.x hands
 * one thrown in a route or task to its context's exception handler. Left there, an {@link OutOfMemoryError} would be
 * a log line while the process goes on with a connection or a whole poll group gone. Handed to {@link #raise}, it
 * reaches the process's uncaught-exception handler (the service's: one log line, the stop, exit status 3), as an
 * Error that ends a plain thread does.
 */
public final class FatalErrors {
    /** The thread that hands an error on to the uncaught-exception handler. */
    public static final String THREAD = "nvmf4j-fatal";

    private FatalErrors() {
    }

    /**
     * Hands {@code failure} to the default uncaught-exception handler if it is an {@link Error}, on a thread of its
     * own, so that the stop the handler starts never waits for the thread that raised it (an event loop the stop
     * needs). Where no thread can be started (no memory left for one), the handler runs here. Returns whether
     * {@code failure} was such an Error; anything else is the caller's to handle. Netty's
     * {@link OutOfDirectMemoryError} is not fatal: it is Netty's own bound on its direct buffers, refused before
     * anything was allocated, so the connection that met it fails and the others carry on.
     */
    public static boolean raise(Throwable failure) {
        if (!(failure instanceof Error error) || failure instanceof OutOfDirectMemoryError) {
            return false;
        }
        Thread.UncaughtExceptionHandler handler = Thread.getDefaultUncaughtExceptionHandler();
        if (handler == null) {
            return true;
        }
        Thread source = Thread.currentThread();
        try {
            new Thread(() -> handler.uncaughtException(source, error), THREAD).start();
        } catch (Throwable noThread) {
            handler.uncaughtException(source, error);
        }
        return true;
    }
}
