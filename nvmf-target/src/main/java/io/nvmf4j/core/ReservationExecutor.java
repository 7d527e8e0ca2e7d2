package io.nvmf4j.core;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Where the reservation changes of one namespace run: one at a time, in submission order, on a thread of a shared
 * pool ({@code nvmf4j-reservation-store}) that it holds only while it has work. Changes of different namespaces
 * run side by side, so a change that waits (an fsync with PTPL; the other gateways' acknowledgements on an rbd image,
 * bounded by ReservationMetadata's timeout) delays only its own namespace: the bound does not add up across
 * namespaces. The pool has a thread per namespace with work at most, which the configuration bounds.
 */
final class ReservationExecutor implements Executor {
    private static final ExecutorService POOL = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "nvmf4j-reservation-store");
            t.setDaemon(true);
            return t;
        });

    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean running;

    @Override
    public void execute(Runnable task) {
        synchronized (queue) {
            queue.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        POOL.execute(this::drain);
    }

    /** Runs the queued changes until none is left; a failing one is logged and the next runs. */
    private void drain() {
        while (true) {
            Runnable next;
            synchronized (queue) {
                next = queue.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger(ReservationExecutor.class).error("a reservation change failed", e);
            }
        }
    }
}
