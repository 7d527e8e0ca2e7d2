package io.nvmf4j.cmd;

import io.nvmf4j.core.Request;
import io.nvmf4j.nvme.NvmeStatus;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * Where the costly parts of DH-HMAC-CHAP run: reading key files and the Diffie-Hellman computations (tens of
 * milliseconds for ffdhe8192), which on a poll-group thread would stall every other queue of that group. A command
 * hands its work here and goes on, on its queue's thread, when the work is done (as the reservation store does).
 * Daemon threads, half the processors (at least one): a host that floods Negotiates delays other authentications,
 * not I/O.
 */
final class AuthWork {
    private static final ExecutorService THREADS = Executors.newFixedThreadPool(
        Math.max(1, Runtime.getRuntime().availableProcessors() / 2), r -> {
            Thread t = new Thread(r, "nvmf4j-auth");
            t.setDaemon(true);
            return t;
        });

    private AuthWork() {
    }

    /**
     * Runs {@code work} here, then {@code then} on {@code req}'s queue thread; a stopped poll group ends the command
     * with it. When no thread takes the work, the command fails with Internal Error.
     */
    static void run(Request req, Runnable work, Runnable then) {
        try {
            THREADS.execute(() -> {
                work.run();
                try {
                    req.queue().executor().execute(then);
                } catch (RejectedExecutionException e) {
                    // the queue's poll group stopped: its commands are gone with it
                }
            });
        } catch (RejectedExecutionException e) {
            req.fail(NvmeStatus.INTERNAL_ERROR, Request.NO_ERROR_LOCATION);
        }
    }
}
