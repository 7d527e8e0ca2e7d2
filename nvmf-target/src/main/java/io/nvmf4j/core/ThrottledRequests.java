package io.nvmf4j.core;

import io.nvmf4j.nvme.NvmeStatus;

import java.util.Arrays;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The commands of one queue that QoS holds back ({@link io.nvmf4j.qos.NamespaceQos}): each waits here, holding no
 * count on its namespace or controller, until the time its limits gave it, and a timer on the queue's poll group
 * resumes it then (from the start of its execution: the namespace, path and reservation checks run again). A command
 * whose namespace's QoS changed meanwhile resumes at the next wake, at most {@link #MAX_SLEEP_NANOS} later, and takes
 * its budget from the new limits. When the queue closes or loses its controller the waiting commands complete as
 * aborted (their buffers go back with them). Owned by the queue's poll group thread.
 */
public final class ThrottledRequests {
    /** The longest the timer sleeps while commands wait: how soon a changed limit or a closed queue is seen. */
    static final long MAX_SLEEP_NANOS = 10_000_000;

    private final Queue queue;
    private final Runnable wake = this::wake;
    private Request[] waiting = new Request[8];
    private Request[] ready = new Request[8];
    private int count;
    private ScheduledFuture<?> timer;
    private long timerAt;
    private Consumer<Request> resume;

    ThrottledRequests(Queue queue) {
        this.queue = queue;
    }

    /** Commands waiting now. */
    public int size() {
        return count;
    }

    /**
     * Holds {@code req} (its counts given back) until {@code start}; {@code resume} runs it again then, on this poll
     * group.
     */
    public void park(Request req, long start, long now, Consumer<Request> resume) {
        this.resume = resume;
        if (count == waiting.length) {
            waiting = Arrays.copyOf(waiting, count * 2);
            ready = new Request[waiting.length];
        }
        req.qosStart = start;
        req.qosParkedAt = now;
        waiting[count++] = req;
        req.ns.qosWaiting.increment();
        req.ns.qosDelayed.increment();
        arm(start, now);
    }

    private void arm(long start, long now) {
        long at = start - (now + MAX_SLEEP_NANOS) > 0 ? now + MAX_SLEEP_NANOS : start;
        if (timer != null && at - timerAt >= 0) {
            return;
        }
        if (timer != null) {
            timer.cancel(false);
        }
        timerAt = at;
        try {
            timer = queue.executor().schedule(wake, Math.max(0, at - now), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            timer = null;
            abortAll(); // the poll group stopped: nothing would resume them
        }
    }

    private void wake() {
        timer = null;
        if (queue.isClosed() || queue.controller() == null) {
            abortAll();
            return;
        }
        long now = System.nanoTime();
        int kept = 0;
        int due = 0;
        long next = 0;
        for (int i = 0; i < count; i++) {
            Request r = waiting[i];
            waiting[i] = null;
            if (r.qosStart - now <= 0 || r.ns.qos() != r.qosTaken) {
                ready[due++] = r;
            } else {
                next = kept == 0 || r.qosStart - next < 0 ? r.qosStart : next;
                waiting[kept++] = r;
            }
        }
        count = kept;
        if (kept > 0) {
            arm(next, now);
        }
        for (int i = 0; i < due; i++) {
            Request r = ready[i];
            ready[i] = null;
            left(r, now);
            resume.accept(r);
        }
    }

    /** Completes every waiting command as aborted (the queue closed, lost its controller or its poll group). */
    public void abortAll() {
        long now = System.nanoTime();
        while (count > 0) {
            Request r = waiting[--count];
            waiting[count] = null;
            left(r, now);
            r.complete(NvmeStatus.ABORTED_SQ_DELETION);
        }
    }

    private static void left(Request r, long now) {
        r.ns.qosWaiting.decrement();
        r.ns.qosDelayNanos.add(now - r.qosParkedAt);
    }
}
