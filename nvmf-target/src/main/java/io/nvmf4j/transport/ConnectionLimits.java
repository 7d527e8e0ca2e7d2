package io.nvmf4j.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The connections one listener holds: at most {@code perListener} in all and {@code perHost} from one host address
 * (a port does not make a new host). A connection beyond either is refused by the transport (TCP: closed at
 * accept; RDMA: CM reject) with a WARN line naming the limit, at most one a second (the next one says how many
 * were left out), and {@code refused} is told the limit's field. {@link #admit} and {@link #release} are called from
 * any thread.
 */
public final class ConnectionLimits {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimits.class);
    private static final long LOG_INTERVAL_NS = 1_000_000_000L;
    public static final String PER_LISTENER = io.nvmf4j.engine.IoObserver.LIMIT_PER_LISTENER;
    public static final String PER_HOST = io.nvmf4j.engine.IoObserver.LIMIT_PER_HOST;

    private final String listener;
    private final int perListener;
    private final int perHost;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> byHost = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NS);
    private final AtomicLong unlogged = new AtomicLong();
    private final Consumer<String> refusedBy;

    /** {@code listener} names it in log lines (e.g. "tcp 127.0.0.1:4420"). */
    public ConnectionLimits(String listener, int perListener, int perHost) {
        this(listener, perListener, perHost, limit -> {
        });
    }

    /** As {@link #ConnectionLimits(String, int, int)}; each refusal tells {@code refusedBy} the limit's field. */
    public ConnectionLimits(String listener, int perListener, int perHost, Consumer<String> refusedBy) {
        this.listener = listener;
        this.perListener = perListener;
        this.perHost = perHost;
        this.refusedBy = refusedBy;
    }

    /**
     * Counts a new connection from {@code host} and returns null, or returns why it is refused (then nothing is
     * counted and the caller refuses it; the refusal is logged here). An admitted connection is {@link #release}d
     * exactly once when it closes.
     */
    public String admit(InetAddress host) {
        if (total.incrementAndGet() > perListener) {
            total.decrementAndGet();
            return refuse(host, PER_LISTENER, PER_LISTENER + " " + perListener + " reached on " + listener);
        }
        AtomicInteger n = byHost.computeIfAbsent(host, h -> new AtomicInteger());
        if (n.incrementAndGet() > perHost) {
            n.decrementAndGet();
            total.decrementAndGet();
            return refuse(host, PER_HOST, PER_HOST + " " + perHost + " reached for " + host.getHostAddress()
                + " on " + listener);
        }
        return null;
    }

    /** Uncounts a connection {@link #admit} let in. */
    public void release(InetAddress host) {
        total.decrementAndGet();
        byHost.computeIfPresent(host, (h, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /** Connections held now. */
    public int connections() {
        return total.get();
    }

    /** Connections refused since the listener started. */
    public long refused() {
        return refused.get();
    }

    private String refuse(InetAddress host, String limit, String why) {
        refused.incrementAndGet();
        refusedBy.accept(limit);
        long now = System.nanoTime();
        long last = lastLog.get();
        if (now - last >= LOG_INTERVAL_NS && lastLog.compareAndSet(last, now)) {
            long skipped = unlogged.getAndSet(0);
            LOG.warn("connection from {} refused: {}{}", host.getHostAddress(), why,
                skipped > 0 ? " (" + skipped + " more refusals not logged)" : "");
        } else {
            unlogged.incrementAndGet();
        }
        return why;
    }
}
