package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.nvmf4j.engine.IoNamespace;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The meters of one namespace ({@code subsystem}, {@code nsid}), resolved once when the namespace is first
 * seen, so that {@link #record} only increments: no tag list, string or boxed value per I/O.
 *
 * <p>{@link #record} runs on poll-group threads (any of them, concurrently); the meters are thread-safe.
 * Error counters are created on the first error with that status and kept in a table indexed by SCT and SC.
 */
final class NamespaceMeters {
    private final MeterRegistry registry;
    private final Tags tags;
    private final Counter reads;
    private final Counter writes;
    private final Counter others;
    private final Counter bytesRead;
    private final Counter bytesWritten;
    private final Timer readLatency;
    private final Timer writeLatency;
    private final StatusCounters errors;
    /** The namespace object counted now (one removed and added again under the same nsid: the latest). */
    private volatile IoNamespace namespace;
    private Gauge durabilityErrors;
    /** QoS: I/Os held back, seconds they waited, I/Os waiting now (registered with the gauge above). */
    private List<Meter> qos = List.of();

    NamespaceMeters(MeterRegistry registry, String subsystem, String nsid) {
        this(registry, LatencyBuckets.defaults(), subsystem, nsid);
    }

    NamespaceMeters(MeterRegistry registry, LatencyBuckets buckets, String subsystem, String nsid) {
        this.registry = registry;
        this.tags = Tags.of(MetricNames.TAG_SUBSYSTEM, subsystem, MetricNames.TAG_NSID, nsid);
        this.reads = command(MetricNames.OP_READ);
        this.writes = command(MetricNames.OP_WRITE);
        this.others = command(MetricNames.OP_OTHER);
        this.bytesRead = bytes(MetricNames.OP_READ);
        this.bytesWritten = bytes(MetricNames.OP_WRITE);
        this.readLatency = buckets.timer(registry, tags.and(MetricNames.TAG_OP, MetricNames.OP_READ));
        this.writeLatency = buckets.timer(registry, tags.and(MetricNames.TAG_OP, MetricNames.OP_WRITE));
        this.errors = new StatusCounters(registry, MetricNames.IO_ERRORS, "I/O commands completed with an error, by status",
            tags);
    }

    private Counter command(String op) {
        return Counter.builder(MetricNames.IO_COMMANDS).description("I/O commands completed")
            .tags(tags).tag(MetricNames.TAG_OP, op).register(registry);
    }

    private Counter bytes(String op) {
        return Counter.builder(MetricNames.IO_BYTES).description("data bytes moved by successful reads and writes")
            .baseUnit("bytes").tags(tags).tag(MetricNames.TAG_OP, op).register(registry);
    }

    /**
     * Attaches the namespace whose device's durability errors the gauge reads; the gauge is registered on the
     * first call (slow path: the namespace's first I/O).
     */
    synchronized void bind(IoNamespace ns) {
        namespace = ns;
        if (durabilityErrors == null) {
            durabilityErrors = Gauge.builder(MetricNames.NAMESPACE_DURABILITY_ERRORS, this, NamespaceMeters::durabilityErrorCount)
                .description("failed attempts of the namespace's device to make acknowledged writes durable; after the "
                    + "first, its writes and flushes fail")
                .tags(tags).strongReference(true).register(registry);
            qos = List.of(
                FunctionCounter.builder(MetricNames.QOS_DELAYED, this, m -> qosRead(IoNamespace::qosDelayed))
                    .description("I/O commands QoS held back (each waited for its budget; none is failed)")
                    .tags(tags).register(registry),
                FunctionCounter.builder(MetricNames.QOS_THROTTLED, this, m -> qosRead(IoNamespace::qosDelayNanos) / 1e9)
                    .description("seconds I/O commands waited for their QoS budget, summed").baseUnit("seconds")
                    .tags(tags).register(registry),
                Gauge.builder(MetricNames.QOS_WAITING, this, m -> qosRead(IoNamespace::qosWaiting))
                    .description("I/O commands waiting for their QoS budget now").tags(tags)
                    .strongReference(true).register(registry));
        }
    }

    private double qosRead(java.util.function.ToLongFunction<IoNamespace> f) {
        IoNamespace ns = namespace;
        return ns == null ? 0 : f.applyAsLong(ns);
    }

    private double durabilityErrorCount() {
        IoNamespace ns = namespace;
        return ns == null ? 0 : ns.durabilityErrors();
    }

    /** One completed I/O command; poll-group thread, allocation-free once the status was seen before. */
    void record(int opcode, int bytes, long latencyNanos, int status) {
        switch (opcode) {
            case Opcodes.IO_READ -> {
                reads.increment();
                if (bytes > 0) {
                    bytesRead.increment(bytes);
                }
                readLatency.record(latencyNanos, TimeUnit.NANOSECONDS);
            }
            case Opcodes.IO_WRITE -> {
                writes.increment();
                if (bytes > 0) {
                    bytesWritten.increment(bytes);
                }
                writeLatency.record(latencyNanos, TimeUnit.NANOSECONDS);
            }
            case Opcodes.FABRICS -> {
                // Disconnect and other fabrics commands on an I/O queue are not I/O; only their errors count
            }
            default -> others.increment();
        }
        if (!NvmeStatus.isSuccess(status)) {
            errors.increment(status);
        }
    }

    Timer readLatency() {
        return readLatency;
    }

    Timer writeLatency() {
        return writeLatency;
    }

    /** Unregisters every meter (the namespace is gone). */
    void remove() {
        List<Meter> all = new ArrayList<>(List.of(reads, writes, others, bytesRead, bytesWritten, readLatency,
            writeLatency));
        if (durabilityErrors != null) {
            all.add(durabilityErrors);
        }
        all.addAll(qos);
        all.forEach(registry::remove);
        errors.remove();
    }
}
