package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.nvmf4j.engine.IoObserver;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The meters of one transport ({@code transport="tcp"}): open connections, Connects, fatal errors by FES,
 * connections closed by the handshake timeout.
 */
final class TransportMeters {
    private static final int FES_TABLE = 256;

    private final MeterRegistry registry;
    private final Tags tags;
    private final AtomicLong open = new AtomicLong();
    private final Counter adminQueues;
    private final Counter ioQueues;
    private final Counter connectTimeouts;
    private final Counter refusedPerListener;
    private final Counter refusedPerHost;
    private final AtomicReferenceArray<Counter> errorsByFes = new AtomicReferenceArray<>(FES_TABLE);

    TransportMeters(MeterRegistry registry, String transport) {
        this.registry = registry;
        this.tags = Tags.of(MetricNames.TAG_TRANSPORT, transport);
        Gauge.builder(MetricNames.TRANSPORT_CONNECTIONS, open, AtomicLong::get).description("open transport connections")
            .tags(tags).strongReference(true).register(registry);
        this.adminQueues = queues("admin");
        this.ioQueues = queues("io");
        this.connectTimeouts = Counter.builder(MetricNames.TRANSPORT_CONNECT_TIMEOUTS)
            .description("connections closed for not completing ICReq and Connect in time").tags(tags).register(registry);
        this.refusedPerListener = refused(IoObserver.LIMIT_PER_LISTENER);
        this.refusedPerHost = refused(IoObserver.LIMIT_PER_HOST);
    }

    private Counter refused(String limit) {
        return Counter.builder(MetricNames.TRANSPORT_CONNECTIONS_REFUSED)
            .description("connections refused at accept by a listener's limit").tags(tags)
            .tag(MetricNames.TAG_LIMIT, limit).register(registry);
    }

    private Counter queues(String kind) {
        return Counter.builder(MetricNames.TRANSPORT_QUEUES_CONNECTED).description("queues bound to a controller by Connect")
            .tags(tags).tag(MetricNames.TAG_QUEUE, kind).register(registry);
    }

    /** Unregisters every meter of this transport. */
    synchronized void remove() {
        registry.find(MetricNames.TRANSPORT_CONNECTIONS).tags(tags).meters().forEach(registry::remove);
        registry.remove(adminQueues);
        registry.remove(ioQueues);
        registry.remove(connectTimeouts);
        registry.remove(refusedPerListener);
        registry.remove(refusedPerHost);
        for (int i = 0; i < FES_TABLE; i++) {
            Counter c = errorsByFes.get(i);
            if (c != null) {
                registry.remove(c);
            }
        }
    }

    void opened() {
        open.incrementAndGet();
    }

    void closed() {
        open.decrementAndGet();
    }

    void queueConnected(int qid) {
        (qid == 0 ? adminQueues : ioQueues).increment();
    }

    void connectTimedOut() {
        connectTimeouts.increment();
    }

    void connectionRefused(String limit) {
        (IoObserver.LIMIT_PER_HOST.equals(limit) ? refusedPerHost : refusedPerListener).increment();
    }

    void error(int fes) {
        int i = fes & 0xFFFF;
        Counter c = i < FES_TABLE ? errorsByFes.get(i) : null;
        if (c == null) {
            c = createError(i);
        }
        c.increment();
    }

    private synchronized Counter createError(int fes) {
        Counter c = fes < FES_TABLE ? errorsByFes.get(fes) : null;
        if (c == null) {
            c = Counter.builder(MetricNames.TRANSPORT_ERRORS).description("fatal transport errors, by FES")
                .tags(tags).tag(MetricNames.TAG_FES, String.format("0x%02x", fes)).register(registry);
            if (fes < FES_TABLE) {
                errorsByFes.set(fes, c);
            }
        }
        return c;
    }
}
