package io.nvmf4j.engine;

import io.nvmf4j.config.LogText;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The INFO lines of controllers coming and going, and of refused Connects, written the same way by both engines:
 * a sentence for people plus key/value pairs ({@code subnqn}, {@code hostnqn}, {@code host} = ip:port,
 * {@code transport}, {@code cntlid}, ...) that the JSON log format writes as fields.
 *
 * <p>The NQNs come from a host's Connect and the reasons may quote them, so both go through {@link LogText#escape}
 * before they reach a line: a hostnqn holding a line break cannot write a forged entry.
 *
 * <p>Refusals are rate-limited: a host (or a scanner) that retries a bad Connect in a loop would otherwise fill the
 * disk. At most {@value #REFUSALS_PER_WINDOW} are logged per {@value #WINDOW_SECONDS} s; the first line of the next
 * window says how many were left out. Logger {@code io.nvmf4j.engine.ControllerLog}, so they can be routed apart.
 */
public final class ControllerLog {
    /** Named as before the class moved, so existing log routing keeps working. */
    private static final Logger LOG = LoggerFactory.getLogger("io.nvmf4j.engine.ControllerLog");
    static final int REFUSALS_PER_WINDOW = 20;
    static final long WINDOW_SECONDS = 10;
    private static final RateLimit REFUSALS = new RateLimit(REFUSALS_PER_WINDOW, WINDOW_SECONDS * 1_000_000_000L);

    private ControllerLog() {
    }

    /**
     * A controller was created by an admin-queue Connect; {@code adminQueueSize} 0 when the engine does not know it
     * (spdk).
     */
    public static void connected(String subnqn, int cntlid, String hostnqn, String host, String transport, int katoMs,
                                 int adminQueueSize) {
        subnqn = LogText.escape(subnqn);
        hostnqn = LogText.escape(hostnqn);
        LoggingEventBuilder b = event(LOG.atInfo(), subnqn, hostnqn, host, transport)
            .addKeyValue("cntlid", cntlid).addKeyValue("kato_ms", katoMs);
        if (adminQueueSize > 0) {
            b.addKeyValue("admin_queue_size", adminQueueSize);
        }
        b.log("controller {} of {} connected: host {} at {} over {}, kato {} ms{}", cntlid, subnqn, hostnqn, host,
            transport, katoMs, adminQueueSize > 0 ? ", admin queue of " + adminQueueSize : "");
    }

    /**
     * A controller was torn down; {@code ioQueues} is how many I/O queues it connected in its life (a host usually
     * deletes them before its admin queue) and {@code seconds} how long it lived.
     */
    public static void disconnected(String subnqn, int cntlid, String hostnqn, String host, String transport,
                                    int ioQueues, long seconds, String reason) {
        subnqn = LogText.escape(subnqn);
        hostnqn = LogText.escape(hostnqn);
        reason = LogText.escape(reason);
        event(LOG.atInfo(), subnqn, hostnqn, host, transport)
            .addKeyValue("cntlid", cntlid).addKeyValue("io_queues", ioQueues).addKeyValue("duration_s", seconds)
            .addKeyValue("reason", reason)
            .log("controller {} of {} disconnected: host {} at {} over {}, {} I/O queue(s), up {} s: {}", cntlid, subnqn,
                hostnqn, host, transport, ioQueues, seconds, reason);
    }

    /** A Connect that was refused (qid 0: admin queue), with the reason the host is told through its status. */
    public static void refused(String subnqn, String hostnqn, String host, String transport, int qid, String reason) {
        long skipped = REFUSALS.acquire(System.nanoTime());
        if (skipped < 0) {
            return;
        }
        subnqn = LogText.escape(subnqn);
        hostnqn = LogText.escape(hostnqn);
        reason = LogText.escape(reason);
        LoggingEventBuilder b = event(LOG.atInfo(), subnqn, hostnqn, host, transport).addKeyValue("qid", qid)
            .addKeyValue("reason", reason);
        String more = "";
        if (skipped > 0) {
            b.addKeyValue("refusals_not_logged", skipped);
            more = " (" + skipped + " earlier refusals not logged: more than " + REFUSALS_PER_WINDOW + " in "
                + WINDOW_SECONDS + " s)";
        }
        b.log("connect refused: host {} at {} over {} to {} (qid {}): {}{}", hostnqn, host, transport, subnqn, qid,
            reason, more);
    }

    /** A failed DH-HMAC-CHAP authentication (rate-limited with the refusals), with the reason code's meaning. */
    public static void authFailed(String subnqn, String hostnqn, String host, String transport, int cntlid, int qid,
                                  String reason) {
        long skipped = REFUSALS.acquire(System.nanoTime());
        if (skipped < 0) {
            return;
        }
        subnqn = LogText.escape(subnqn);
        hostnqn = LogText.escape(hostnqn);
        reason = LogText.escape(reason);
        LoggingEventBuilder b = event(LOG.atWarn(), subnqn, hostnqn, host, transport).addKeyValue("cntlid", cntlid)
            .addKeyValue("qid", qid).addKeyValue("reason", reason);
        if (skipped > 0) {
            b.addKeyValue("refusals_not_logged", skipped);
        }
        b.log("authentication failed: host {} at {} over {} to {} (cntlid {}, qid {}): {}", hostnqn, host, transport,
            subnqn, cntlid, qid, reason);
    }

    /** Starts a new refusal window now, forgetting what was left out (for tests that count refusal lines). */
    public static void resetRefusalWindow() {
        REFUSALS.reset();
    }

    private static LoggingEventBuilder event(LoggingEventBuilder b, String subnqn, String hostnqn, String host,
                                             String transport) {
        return b.addKeyValue("subnqn", subnqn).addKeyValue("hostnqn", hostnqn).addKeyValue("host", host)
            .addKeyValue("transport", transport);
    }

    /** At most {@code permits} per window of {@code windowNanos}; counts what it turned away. */
    static final class RateLimit {
        private final int permits;
        private final long windowNanos;
        private long windowStart;
        private boolean started;
        private int used;
        private long skipped;

        RateLimit(int permits, long windowNanos) {
            this.permits = permits;
            this.windowNanos = windowNanos;
        }

        /**
         * -1: over the limit, do not log; otherwise allowed, and the number turned away since the last allowed
         * one (reported once).
         */
        synchronized void reset() {
            started = false;
            skipped = 0;
        }

        synchronized long acquire(long now) {
            if (!started || now - windowStart >= windowNanos) {
                started = true;
                windowStart = now;
                used = 0;
            }
            if (used >= permits) {
                skipped++;
                return -1;
            }
            used++;
            long s = skipped;
            skipped = 0;
            return s;
        }
    }
}
