package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.BdevIoStat;
import io.nvmf4j.engine.BdevLatency;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.EngineIoStats;
import io.nvmf4j.engine.PollGroupStat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The spdk engine's data-path meters, read from SPDK at each scrape (SPDK counts its own I/O; no per-I/O
 * observer runs). Per namespace, from SPDK's statistics of the bdev behind it (a bdev backs at most one
 * namespace): {@code nvmf_io_commands_total{op=read|write|other}} (other: unmaps), {@code nvmf_io_bytes_total},
 * and {@code nvmf_spdk_io_latency_seconds_total{op}} (sum of latencies: mean latency is its rate over the commands'
 * rate), and gauges {@code nvmf_spdk_io_latency_percentile_seconds{percentile}} from SPDK's latency histogram of the
 * bdev (one per bdev, reads and writes together: {@link #latency}). From SPDK's poll groups: {@code nvmf_transport_queues_connected_total
 * {transport="all",queue}}, gauges {@code nvmf_spdk_pollgroup_queues{queue}}, {@code nvmf_spdk_pollgroup_pending_bdev_io},
 * counter {@code nvmf_spdk_pollgroup_completed_io_total}, gauge {@code nvmf_spdk_pollgroups}.
 */
final class SpdkMeters {
    private final MeterRegistry registry;
    private final EngineIoStats engine;
    /** The engine's control layer, for the document (which namespaces there are). */
    private final ConfigController<?> target;
    /** "nqn nsid" → the meters of that namespace and the latest values they read. */
    private final Map<String, Cells> byNamespace = new HashMap<>();
    private volatile PollGroupStat pollGroups = new PollGroupStat(0, 0, 0, 0, 0, 0, 0);

    SpdkMeters(MeterRegistry registry, ConfigController<?> target, EngineIoStats engine) {
        this.registry = registry;
        this.target = target;
        this.engine = engine;
        Tags all = Tags.of(MetricNames.TAG_TRANSPORT, "all");
        FunctionCounter.builder(MetricNames.TRANSPORT_QUEUES_CONNECTED, this, m -> m.pollGroups.adminQueuesTotal())
            .description("queues bound to a controller by Connect").tags(all).tag(MetricNames.TAG_QUEUE, "admin")
            .register(registry);
        FunctionCounter.builder(MetricNames.TRANSPORT_QUEUES_CONNECTED, this, m -> m.pollGroups.ioQueuesTotal())
            .description("queues bound to a controller by Connect").tags(all).tag(MetricNames.TAG_QUEUE, "io")
            .register(registry);
        gauge(MetricNames.SPDK_POLLGROUP_QUEUES, "queues on SPDK's poll groups now", Tags.of(MetricNames.TAG_QUEUE,
            "admin"), m -> m.pollGroups.adminQueues());
        gauge(MetricNames.SPDK_POLLGROUP_QUEUES, "queues on SPDK's poll groups now", Tags.of(MetricNames.TAG_QUEUE,
            "io"), m -> m.pollGroups.ioQueues());
        gauge(MetricNames.SPDK_POLLGROUP_PENDING_BDEV_IO, "bdev I/Os SPDK's poll groups wait for", Tags.empty(),
            m -> m.pollGroups.pendingBdevIo());
        gauge(MetricNames.SPDK_POLLGROUPS, "SPDK NVMe-oF poll groups (one per reactor)", Tags.empty(),
            m -> m.pollGroups.pollGroups());
        FunctionCounter.builder(MetricNames.SPDK_POLLGROUP_COMPLETED_IO, this, m -> m.pollGroups.completedIo())
            .description("NVMe I/O commands SPDK's poll groups completed").register(registry);
    }

    private void gauge(String name, String description, Tags tags, ToDoubleFunction<SpdkMeters> f) {
        Gauge.builder(name, this, f).description(description).tags(tags).strongReference(true).register(registry);
    }

    /** Reads SPDK's statistics and (un)registers namespace meters to match the engine's namespaces. */
    synchronized void refresh() {
        pollGroups = engine.pollGroupStat();
        Map<String, BdevIoStat> stats = engine.bdevIoStats();
        Map<String, BdevLatency> latencies = engine.bdevLatency(null);
        TargetConfig c = target.configSnapshot();
        Set<String> live = new HashSet<>();
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                String key = s.nqn + ' ' + n.nsid;
                live.add(key);
                Cells cells = byNamespace.computeIfAbsent(key, k -> new Cells(registry, s.nqn, n.nsid));
                BdevIoStat st = stats.get(n.bdev);
                if (st != null) {
                    cells.stat = st;
                }
                BdevLatency l = latencies.get(n.bdev);
                cells.latency = percentiles(l == null ? BdevLatency.none(n.bdev) : l);
            }
        }
        byNamespace.entrySet().removeIf(e -> {
            boolean gone = !live.contains(e.getKey());
            if (gone) {
                e.getValue().remove();
            }
            return gone;
        });
    }

    /**
     * Latency percentiles of namespace {@code nsid} of {@code nqn} since it was added, from SPDK's latency histogram
     * of its bdev: one entry, op {@code all} (SPDK keeps one histogram per bdev, whatever the command); count 0 for
     * a namespace the document does not have.
     */
    LatencyPercentiles latency(String nqn, int nsid) {
        for (SubsystemConfig s : target.configSnapshot().subsystems) {
            if (s.nqn.equals(nqn)) {
                for (NamespaceConfig n : s.namespaces) {
                    if (n.nsid == nsid) {
                        BdevLatency l = engine.bdevLatency(n.bdev).get(n.bdev);
                        return percentiles(l == null ? BdevLatency.none(n.bdev) : l);
                    }
                }
            }
        }
        return LatencyPercentiles.none(MetricNames.OP_ALL);
    }

    /** p50, p90, p99 and p99.9 of a histogram; max: the upper bound of its slowest bucket. */
    static LatencyPercentiles percentiles(BdevLatency l) {
        double[] p = new double[Metrics.PERCENTILES.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = l.quantileNanos(Metrics.PERCENTILES[i]) / 1e3;
        }
        return new LatencyPercentiles(MetricNames.OP_ALL, l.count(), p[0], p[1], p[2], p[3], l.maxNanos() / 1e3);
    }

    /** One namespace's counters, reading the latest statistics of its bdev. */
    private static final class Cells {
        private final MeterRegistry registry;
        private final List<Meter> meters = new ArrayList<>();
        volatile BdevIoStat stat = new BdevIoStat("", 0, 0, 0, 0, 0, 0, 0, 0, 1);
        volatile LatencyPercentiles latency = LatencyPercentiles.none(MetricNames.OP_ALL);

        Cells(MeterRegistry registry, String nqn, int nsid) {
            this.registry = registry;
            Tags tags = Tags.of(MetricNames.TAG_SUBSYSTEM, nqn, MetricNames.TAG_NSID, Integer.toString(nsid));
            counter(MetricNames.IO_COMMANDS, "I/O commands completed", tags, MetricNames.OP_READ, s -> s.readOps());
            counter(MetricNames.IO_COMMANDS, "I/O commands completed", tags, MetricNames.OP_WRITE, s -> s.writeOps());
            counter(MetricNames.IO_COMMANDS, "I/O commands completed", tags, MetricNames.OP_OTHER, s -> s.unmapOps());
            counter(MetricNames.IO_BYTES, "data bytes of successful reads and writes", tags, MetricNames.OP_READ,
                s -> s.bytesRead());
            counter(MetricNames.IO_BYTES, "data bytes of successful reads and writes", tags, MetricNames.OP_WRITE,
                s -> s.bytesWritten());
            counter(MetricNames.SPDK_IO_LATENCY, "sum of SPDK's bdev I/O latencies, seconds", tags,
                MetricNames.OP_READ, s -> (double) s.readLatencyTicks() / Math.max(1, s.tickRate()));
            counter(MetricNames.SPDK_IO_LATENCY, "sum of SPDK's bdev I/O latencies, seconds", tags,
                MetricNames.OP_WRITE, s -> (double) s.writeLatencyTicks() / Math.max(1, s.tickRate()));
            percentile(tags, "50", l -> l.p50Micros());
            percentile(tags, "90", l -> l.p90Micros());
            percentile(tags, "99", l -> l.p99Micros());
            percentile(tags, "99.9", l -> l.p999Micros());
        }

        private void percentile(Tags tags, String percentile, ToDoubleFunction<LatencyPercentiles> micros) {
            meters.add(Gauge.builder(MetricNames.SPDK_IO_LATENCY_PERCENTILE, this,
                    c -> micros.applyAsDouble(c.latency) / 1e6)
                .description("latency percentile of the namespace's I/O since it was added (SPDK's bdev histogram;"
                    + " reads, writes and the rest together)")
                .tags(tags).tag(MetricNames.TAG_PERCENTILE, percentile).strongReference(true).register(registry));
        }

        private void counter(String name, String description, Tags tags, String op, ToDoubleFunction<BdevIoStat> f) {
            meters.add(FunctionCounter.builder(name, this, c -> f.applyAsDouble(c.stat)).description(description)
                .tags(tags).tag(MetricNames.TAG_OP, op).register(registry));
        }

        void remove() {
            meters.forEach(registry::remove);
        }
    }
}
