package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.MetricsConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.EngineIoStats;
import io.nvmf4j.engine.IoCommand;
import io.nvmf4j.engine.IoController;
import io.nvmf4j.engine.IoNamespace;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.RbdCounters;
import io.nvmf4j.engine.SubsystemStats;
import io.nvmf4j.nvme.Opcodes;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The target's metrics in a Micrometer {@link PrometheusMeterRegistry}, scraped as Prometheus text.
 *
 * <pre>
 *   Metrics m = new Metrics();
 *   ConfigController<Engine> t = Engines.start(config, m.observer());
 *   m.bind(t);                 // gauges that read the engine
 *   String text = m.scrape();  // GET /metrics
 * </pre>
 *
 * <h2>Meters</h2>
 * Per namespace (tags {@code subsystem=<nqn>}, {@code nsid=<n>}): {@code nvmf_io_commands_total{op=read|write|other}},
 * {@code nvmf_io_bytes_total{op=read|write}}, {@code nvmf_io_latency_seconds{op=read|write}} and
 * {@code nvmf_io_errors_total{status="<sct>/0x<sc>"}}, gauge {@code nvmf_namespace_durability_errors}. Per subsystem: {@code nvmf_admin_errors_total{status}},
 * {@code nvmf_keepalive_expired_total}, {@code nvmf_auth_failures_total}, {@code nvmf_controller_limit_refusals_total}, gauges {@code nvmf_subsystem_controllers}, {@code nvmf_subsystem_queues},
 * {@code nvmf_subsystem_namespaces}. Per transport ({@code transport=tcp}): {@code nvmf_transport_connections}
 * (open), {@code nvmf_transport_queues_connected_total{queue=admin|io}}, {@code nvmf_transport_errors_total{fes}},
 * {@code nvmf_transport_connect_timeouts_total}, {@code nvmf_transport_connections_refused_total{limit}}. Per pool and volume: capacity gauges read at each scrape
 * ({@link PoolMeters}).
 * Engine: counters {@code nvmf_pollgroup_busy_seconds_total} and (java engine) {@code nvmf_pollgroup_allocated_bytes_total};
 * {@code nvmf4j_build_info{version,revision,java,engine}}. JVM: memory, GC, threads, class loading, CPU, uptime. See
 * {@link MetricNames}. With the spdk engine the per-namespace counts and queue counts come from SPDK's own
 * statistics instead ({@link SpdkMeters}); docs/metrics.md lists which meters each engine has.
 *
 * <h2>Latency: histogram buckets, quantiles in Prometheus</h2>
 * The latency timers publish a <em>percentile histogram</em> (cumulative {@code _bucket{le=...}} series,
 * by default Micrometer's roughly geometric bucket ladder clipped to 1 µs .. 10 s: 106 buckets with +Inf, spaced
 * about 1.25x; or the config's {@code metrics.latencyBucketsMicros}, see {@link LatencyBuckets}) plus {@code _count}, {@code _sum}
 * and {@code _max}. p50/p99/p999 are
 * computed at query time, {@code histogram_quantile(0.99, sum by (le) (rate(nvmf_io_latency_seconds_bucket[1m])))},
 * which is what Prometheus users expect: buckets add up across namespaces, poll groups and targets and follow
 * the query's range, where client-side percentiles ({@code quantile="0.99"} gauges) can be neither summed nor
 * re-windowed. No client-side percentiles are published (with the Prometheus 1.x client Micrometer drops them
 * from a timer that also has a histogram anyway, while still paying for their HdrHistogram). The dashboard shipped in
 * {@code grafana/nvmf4j-dashboard.json} draws p50/p99/p999 this way.
 *
 * <h2>No allocation per I/O</h2>
 * {@link #observer()} runs on poll-group threads for every command. The meters of a namespace are resolved
 * once, when the namespace is first seen, into a {@link NamespaceMeters} found through a
 * {@link ConcurrentHashMap} keyed by the {@link Namespace} object (identity: it does not override equals),
 * whose {@code get} does not allocate; errors by status use a table indexed by SCT and SC. Counters, the
 * timer's count/sum/max and its fixed-boundary bucket histogram only add to pre-allocated cells. Nor does it read
 * the clock: the max and the histogram ask the registry's clock for the wall time on every record (to rotate their
 * time windows), and the registry this class makes has a {@link CoarseClock}, whose wall time is a field.
 * {@code MetricsAllocationTest} checks this with the JVM's per-thread allocation counter (measured: 0 bytes over
 * 112 500 calls on one thread; 0 bytes on the poll-group threads over 12 000 NVMe/TCP I/Os after warm-up).
 * Fabrics commands on I/O queues (the Connect of an I/O queue) are not counted as I/O; only their errors are.
 *
 * <h2>Per host and per controller</h2>
 * The java engine's observer also counts each I/O for its controller and for the controller's host NQN
 * ({@link IoCounts}: {@link java.util.concurrent.atomic.LongAdder} cells, no lock), and offers it to the list of
 * the slowest recent I/Os ({@link SlowIos}). The controller is found through a {@link ConcurrentHashMap} keyed by
 * the {@link Controller} object (identity), resolved once per controller like a namespace. Per host the meters
 * {@code nvmf_host_io_*{host}} are always published (one set per host NQN); per controller
 * {@code nvmf_controller_io_*{subsystem,cntlid,host}} only with {@code metrics.perControllerMeters} (a controller
 * set per connected controller is too many series for a scrape at thousands of controllers). The REST views
 * ({@link #hosts}, {@link #controllers}, {@link #slowest}, {@link #latency}) are always there.
 *
 * <p>Bounds: a destroyed controller's entry (and its meters) goes at the next scrape or REST read, and when the
 * map has grown to twice the controllers it held after the last pruning (plus {@value #PRUNE_SLACK}), so it
 * holds at most about twice the live controllers whoever reads. A host's entry and meters stay while it has a
 * controller and {@link #HOST_RETENTION_NANOS} after its last one went (so a scrape sees its last counts).
 *
 * <h2>Lifecycle of namespace and subsystem meters</h2>
 * A namespace whose I/O arrives before {@link #bind} (or whose nsid does not exist) is counted under
 * {@code subsystem="unknown", nsid="0"}. Meters of namespaces and subsystems that were removed are
 * unregistered at the next {@link #scrape()}, which also drops the cached {@link Namespace} (and so its block
 * device) for the garbage collector.
 */
public final class Metrics implements AutoCloseable {
    /** Entries of destroyed controllers tolerated above twice the live ones before the resolve path prunes. */
    static final int PRUNE_SLACK = 64;
    /** How long a host's counts stay after its last controller went. */
    static final long HOST_RETENTION_NANOS = TimeUnit.MINUTES.toNanos(5);
    /** The slowest I/Os are kept per window of this length (a listing covers this window and the one before). */
    static final long SLOW_WINDOW_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The percentiles {@link #latency} reports. */
    static final double[] PERCENTILES = {0.5, 0.9, 0.99, 0.999};

    private final PrometheusMeterRegistry registry;
    /** The registry's clock when this made the registry (closed with it), else null. */
    private final CoarseClock clock;
    private final LatencyBuckets buckets;
    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
    private final Observer observer = new Observer();
    /** Namespace object (identity) → its meters; read without a lock on the I/O path. */
    private final ConcurrentHashMap<IoNamespace, NamespaceMeters> byNamespace = new ConcurrentHashMap<>();
    /** "nqn nsid" → meters, so a namespace removed and added again under the same nsid shares them. */
    private final Map<String, NamespaceMeters> byKey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, SubsystemMeters> bySubsystem = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, TransportMeters> byTransport = new ConcurrentHashMap<>();
    /** Controller object (identity) → its counts; read without a lock on the I/O path. */
    private final ConcurrentHashMap<IoController, ControllerIo> byController = new ConcurrentHashMap<>();
    /** Host NQN → its counts (changed under the cache lock). */
    private final ConcurrentHashMap<String, HostIo> byHost = new ConcurrentHashMap<>();
    private final SlowIos slow = new SlowIos(SLOW_WINDOW_NANOS);
    /** {@code metrics.perControllerMeters}: publish a set of meters per controller. */
    private final boolean perControllerMeters;
    /** The size of {@link #byController} at which the resolve path prunes it (cache lock). */
    private int pruneControllersAt = PRUNE_SLACK;
    /** Guards changes to the caches above (not their lock-free reads). */
    private final Object cacheLock = new Object();
    private final NamespaceMeters unknownNamespace;
    private final MultiGauge controllers;
    private final MultiGauge queues;
    private final MultiGauge namespaces;
    private final PoolMeters pools;
    private volatile ConfigController<?> target;
    /** The bound engine's capabilities (null before {@link #bind}). */
    private volatile EngineCapabilities capabilities;
    /** The spdk engine's meters (null with the java engine). */
    private volatile SpdkMeters spdk;

    public Metrics() {
        this(new CoarseClock(), LatencyBuckets.defaults(), false);
    }

    /** With the document's {@code metrics} settings (latency buckets), read once: a change applies at the next start. */
    public Metrics(MetricsConfig config) {
        this(new CoarseClock(), LatencyBuckets.of(config), config != null && Boolean.TRUE.equals(config.perControllerMeters));
    }

    /** Uses the given registry (its owner closes it through {@link #close()}) and its clock. */
    public Metrics(PrometheusMeterRegistry registry) {
        this(registry, null, LatencyBuckets.defaults(), false);
    }

    /** A registry of its own on {@code clock} ({@link CoarseClock}: no clock reading per recorded latency). */
    private Metrics(CoarseClock clock, LatencyBuckets buckets, boolean perControllerMeters) {
        this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(), clock), clock, buckets,
            perControllerMeters);
    }

    private Metrics(PrometheusMeterRegistry registry, CoarseClock clock, LatencyBuckets buckets,
                    boolean perControllerMeters) {
        this.registry = registry;
        this.clock = clock;
        this.buckets = buckets;
        this.perControllerMeters = perControllerMeters;
        new JvmMemoryMetrics().bindTo(registry);
        gcMetrics.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        unknownNamespace = new NamespaceMeters(registry, buckets, MetricNames.UNKNOWN_SUBSYSTEM, "0");
        transport("tcp");
        controllers = MultiGauge.builder(MetricNames.SUBSYSTEM_CONTROLLERS).description("live controllers")
            .register(registry);
        queues = MultiGauge.builder(MetricNames.SUBSYSTEM_QUEUES)
            .description("admin and I/O queues of live controllers").register(registry);
        namespaces = MultiGauge.builder(MetricNames.SUBSYSTEM_NAMESPACES).description("active namespaces")
            .register(registry);
        pools = new PoolMeters(registry);
    }

    /** Pass to {@link io.nvmf4j.engine.Engines#start(io.nvmf4j.config.TargetConfig, IoObserver)}. */
    public IoObserver observer() {
        return observer;
    }

    /** Attaches the started target: gauges read it at each scrape, namespaces resolve to their subsystem. */
    public void bind(ConfigController<?> target) {
        this.target = target;
        EngineIoStats own = target.engine().ownIoStats();
        RbdCounters rbd = target.engine().rbdCounters();
        if (own != null) {
            // SPDK counts its own data path: no observer events arrive, so the observer's meters would only
            // ever read 0; SPDK's statistics take their place (see SpdkMeters)
            synchronized (cacheLock) {
                byTransport.values().forEach(TransportMeters::remove);
                byTransport.clear();
                unknownNamespace.remove();
            }
            spdk = new SpdkMeters(registry, target, own);
        } else {
            if (pollThreadAllocatedBytes() >= 0) {
                FunctionCounter.builder(MetricNames.POLLGROUP_ALLOCATED_BYTES, this, m -> pollThreadAllocatedBytes())
                    .description("heap bytes allocated by the poll-group threads since they started")
                    .baseUnit("bytes").register(registry);
            }
        }
        if (rbd != null) {
            FunctionCounter.builder(MetricNames.RBD_BLOCKLISTED, rbd, RbdCounters::blocklisted)
                .description("times an rbd bdev found its Ceph client blocklisted (fenced until it reconnected)")
                .register(registry);
            FunctionCounter.builder(MetricNames.RBD_RECONNECTED, rbd, RbdCounters::reconnected)
                .description("rbd bdevs serving again as a new Ceph client after a blocklist").register(registry);
            FunctionCounter.builder(MetricNames.RBD_REWATCH_FAILURES, rbd, RbdCounters::rewatchFailures)
                .description("failed attempts of an rbd bdev to watch its image's header again after the watch broke")
                .register(registry);
        }
        FunctionCounter.builder(MetricNames.POLLGROUP_BUSY, target, t -> t.busySeconds())
            .description("seconds the poll-group threads spent working (not idle), summed over them")
            .baseUnit("seconds").register(registry);
        String engine = target.configSnapshot().engine;
        capabilities = EngineCapabilities.of(engine);
        BuildInfo.register(registry, engine);
        refresh();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition (format 0.0.4), after refreshing the per-subsystem gauges. */
    public String scrape() {
        refresh();
        return registry.scrape();
    }

    @Override
    public void close() {
        gcMetrics.close();
        registry.close();
        if (clock != null) {
            clock.close();
        }
    }

    // ------------------------------------------------------------------ engine state (scrape thread)

    /** Re-registers the per-subsystem gauges and unregisters meters of what was removed. */
    private void refresh() {
        ConfigController<?> t = target;
        if (t == null) {
            return;
        }
        List<SubsystemStats> stats = t.subsystemStats();
        SpdkMeters sm = spdk;
        if (sm != null) {
            sm.refresh();
        }
        synchronized (this) {
            List<MultiGauge.Row<?>> c = new ArrayList<>();
            List<MultiGauge.Row<?>> q = new ArrayList<>();
            List<MultiGauge.Row<?>> n = new ArrayList<>();
            for (SubsystemStats s : stats) {
                Tags tags = Tags.of(MetricNames.TAG_SUBSYSTEM, s.nqn());
                c.add(MultiGauge.Row.of(tags, s.controllers()));
                q.add(MultiGauge.Row.of(tags, s.queues()));
                n.add(MultiGauge.Row.of(tags, s.namespaces()));
            }
            controllers.register(c, true);
            queues.register(q, true);
            namespaces.register(n, true);
        }
        pools.refresh(t);
        prune(t, stats);
    }

    /**
     * Drops cached namespaces and subsystems the target no longer has and unregisters their meters. Holds the
     * cache lock only for this (poll groups take it once per new namespace in {@link #resolve}); the live set
     * is read under it, so a namespace resolved concurrently is never pruned.
     */
    private void prune(ConfigController<?> t, List<SubsystemStats> stats) {
        synchronized (cacheLock) {
            Set<String> nqns = new HashSet<>();
            for (SubsystemStats s : stats) {
                nqns.add(s.nqn());
                if (spdk == null) {
                    subsystem(s.nqn()); // observer meters: SPDK's data path reports no keep-alive expiries
                }
            }
            bySubsystem.entrySet().removeIf(e -> {
                boolean gone = !nqns.contains(e.getKey());
                if (gone) {
                    e.getValue().remove();
                }
                return gone;
            });
            byNamespace.keySet().removeIf(ns -> t.subsystemOf(ns) == null);
            pruneControllers();
            Set<NamespaceMeters> used = Collections.newSetFromMap(new IdentityHashMap<>());
            used.addAll(byNamespace.values());
            byKey.values().removeIf(m -> {
                boolean gone = !used.contains(m);
                if (gone) {
                    m.remove();
                }
                return gone;
            });
        }
    }

    /** Sum of the JVM's per-thread allocation counters of the poll-group threads (-1 where unsupported). */
    static double pollThreadAllocatedBytes() {
        java.lang.management.ThreadMXBean bean = java.lang.management.ManagementFactory.getThreadMXBean();
        if (!(bean instanceof com.sun.management.ThreadMXBean threads) || !threads.isThreadAllocatedMemorySupported()) {
            return -1;
        }
        if (!threads.isThreadAllocatedMemoryEnabled()) {
            threads.setThreadAllocatedMemoryEnabled(true);
        }
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("nvmf4j-poll")) {
                long b = threads.getThreadAllocatedBytes(t.getId());
                if (b > 0) {
                    sum += b;
                }
            }
        }
        return sum;
    }

    // ------------------------------------------------------------------ lookups (slow paths allocate)

    private NamespaceMeters namespace(IoNamespace ns) {
        if (ns == null) {
            return unknownNamespace;
        }
        NamespaceMeters m = byNamespace.get(ns);
        return m != null ? m : resolve(ns);
    }

    /** First I/O of a namespace object: finds its subsystem and caches its meters. */
    private NamespaceMeters resolve(IoNamespace ns) {
        synchronized (cacheLock) {
            return resolveLocked(ns);
        }
    }

    private NamespaceMeters resolveLocked(IoNamespace ns) {
        NamespaceMeters m = byNamespace.get(ns);
        if (m != null) {
            return m;
        }
        ConfigController<?> t = target;
        String nqn = t == null ? null : t.subsystemOf(ns);
        if (nqn == null) {
            return unknownNamespace; // not bound yet, or removed meanwhile: not cached, so not kept alive
        }
        String nsid = Integer.toString(ns.nsid());
        m = byKey.computeIfAbsent(nqn + ' ' + nsid, k -> new NamespaceMeters(registry, buckets, nqn, nsid));
        m.bind(ns);
        byNamespace.put(ns, m);
        return m;
    }

    private SubsystemMeters subsystem(String nqn) {
        SubsystemMeters m = bySubsystem.get(nqn);
        return m != null ? m : bySubsystem.computeIfAbsent(nqn, k -> new SubsystemMeters(registry, k));
    }

    private TransportMeters transport(String name) {
        TransportMeters m = byTransport.get(name);
        return m != null ? m : byTransport.computeIfAbsent(name, k -> new TransportMeters(registry, k));
    }

    /** Admin errors, keep-alive expiries and authentication failures of one subsystem. */
    private static final class SubsystemMeters {
        private final MeterRegistry registry;
        private final Counter keepAliveExpired;
        private final Counter authFailures;
        private final Counter controllerLimitRefusals;
        private final StatusCounters adminErrors;

        SubsystemMeters(MeterRegistry registry, String nqn) {
            this.registry = registry;
            Tags tags = Tags.of(MetricNames.TAG_SUBSYSTEM, nqn);
            keepAliveExpired = Counter.builder(MetricNames.KEEPALIVE_EXPIRED)
                .description("controllers torn down because their keep-alive timer expired").tags(tags)
                .register(registry);
            authFailures = Counter.builder(MetricNames.AUTH_FAILURES)
                .description("failed DH-HMAC-CHAP authentications (the log names the host and the reason)").tags(tags)
                .register(registry);
            controllerLimitRefusals = Counter.builder(MetricNames.CONTROLLER_LIMIT_REFUSALS)
                .description("admin Connects refused with Controller Busy: every cntlid of the range in use").tags(tags)
                .register(registry);
            adminErrors = new StatusCounters(registry, MetricNames.ADMIN_ERRORS,
                "admin commands completed with an error, by status", tags);
        }

        void remove() {
            registry.remove(keepAliveExpired);
            registry.remove(authFailures);
            registry.remove(controllerLimitRefusals);
            adminErrors.remove();
        }
    }

    // ------------------------------------------------------------------ per host and per controller

    /** The counts of one live controller, and its host's. */
    private static final class ControllerIo {
        final IoController controller;
        final String subsystem;
        final String host;
        final HostIo hostIo;
        final IoCounts counts = new IoCounts();
        /** Its meters ({@code metrics.perControllerMeters}), else empty. */
        List<Meter> meters = List.of();

        ControllerIo(IoController controller, HostIo hostIo) {
            this.controller = controller;
            this.subsystem = controller.subsystemNqn();
            this.host = controller.hostnqn();
            this.hostIo = hostIo;
        }
    }

    /** The counts of one host NQN over its controllers, with its meters. */
    private static final class HostIo {
        final String host;
        final IoCounts counts = new IoCounts();
        final List<Meter> meters;
        /** Its controllers with an entry at the last pruning (cache lock). */
        int controllers;
        /** {@link System#nanoTime()} at the last pruning that found it with a controller (cache lock). */
        long lastSeenNanos = System.nanoTime();

        HostIo(MeterRegistry registry, String host) {
            this.host = host;
            meters = counts.register(registry, MetricNames.HOST_PREFIX, "by the host's controllers",
                Tags.of(MetricNames.TAG_HOST, host));
        }
    }

    private ControllerIo controller(IoController c) {
        ControllerIo e = byController.get(c);
        return e != null ? e : resolve(c);
    }

    /** First I/O of a controller: its entry (and its host's), pruning destroyed ones when the map has grown. */
    private ControllerIo resolve(IoController c) {
        synchronized (cacheLock) {
            ControllerIo e = byController.get(c);
            if (e != null) {
                return e;
            }
            if (byController.size() >= pruneControllersAt) {
                pruneControllers();
            }
            HostIo h = byHost.computeIfAbsent(c.hostnqn(), k -> new HostIo(registry, k));
            e = new ControllerIo(c, h);
            if (perControllerMeters) {
                e.meters = e.counts.register(registry, MetricNames.CONTROLLER_PREFIX, "by the controller",
                    Tags.of(MetricNames.TAG_SUBSYSTEM, e.subsystem, MetricNames.TAG_CNTLID, Integer.toString(c.cntlid()),
                        MetricNames.TAG_HOST, e.host));
            }
            byController.put(c, e);
            return e;
        }
    }

    /**
     * Drops the entries (and meters) of destroyed controllers, and of hosts without a controller for
     * {@link #HOST_RETENTION_NANOS} (cache lock held).
     */
    private void pruneControllers() {
        byController.values().removeIf(e -> {
            boolean gone = e.controller.isDestroyed();
            if (gone) {
                e.meters.forEach(registry::remove);
            }
            return gone;
        });
        pruneControllersAt = Math.max(PRUNE_SLACK, 2 * byController.size() + PRUNE_SLACK);
        byHost.values().forEach(h -> h.controllers = 0);
        byController.values().forEach(e -> e.hostIo.controllers++);
        long now = System.nanoTime();
        byHost.values().removeIf(h -> {
            if (h.controllers > 0) {
                h.lastSeenNanos = now;
                return false;
            }
            boolean gone = now - h.lastSeenNanos > HOST_RETENTION_NANOS;
            if (gone) {
                h.meters.forEach(registry::remove);
            }
            return gone;
        });
    }

    /**
     * Refuses a view the bound engine cannot have ({@link EngineCapabilities.Feature#IO_PER_HOST},
     * {@link EngineCapabilities.Feature#IO_SLOWEST}: the spdk engine, whose SPDK counts I/O per bdev only), with
     * the engine's reason.
     */
    private void require(EngineCapabilities.Feature feature) {
        EngineCapabilities can = capabilities;
        if (can != null && !can.has(feature)) {
            throw ControlException.invalid(can.refusal(feature));
        }
    }

    /** The hosts that did I/O (or did within {@link #HOST_RETENTION_NANOS}), by host NQN. */
    public List<HostTotals> hosts() {
        require(EngineCapabilities.Feature.IO_PER_HOST);
        synchronized (cacheLock) {
            pruneControllers();
            List<HostTotals> out = new ArrayList<>();
            byHost.values().forEach(h -> out.add(new HostTotals(h.host, h.controllers, h.counts.totals())));
            out.sort(Comparator.comparing(HostTotals::host));
            return out;
        }
    }

    /**
     * The live controllers that did I/O, by subsystem and cntlid.
     *
     * @param subsystem only this subsystem's (null: every one)
     * @param host      only this host's (null: every one)
     */
    public List<ControllerTotals> controllers(String subsystem, String host) {
        require(EngineCapabilities.Feature.IO_PER_HOST);
        synchronized (cacheLock) {
            pruneControllers();
            List<ControllerTotals> out = new ArrayList<>();
            for (ControllerIo e : byController.values()) {
                if ((subsystem == null || subsystem.equals(e.subsystem)) && (host == null || host.equals(e.host))) {
                    out.add(new ControllerTotals(e.subsystem, e.controller.cntlid(), e.host, e.counts.totals()));
                }
            }
            out.sort(Comparator.comparing(ControllerTotals::subsystem)
                .thenComparingInt(ControllerTotals::cntlid));
            return out;
        }
    }

    /** Entries held for controllers (live ones and destroyed ones not yet pruned): the bound tests read it. */
    int controllerEntries() {
        return byController.size();
    }

    /** The slowest recent I/Os, slowest first (see {@link SlowIos}). */
    public List<SlowIo> slowest(int limit) {
        require(EngineCapabilities.Feature.IO_SLOWEST);
        return slow.slowest(limit);
    }

    /**
     * Latency percentiles of a namespace's reads and writes since the service started, from its
     * {@code nvmf_io_latency_seconds} histogram (interpolated within a bucket: with the default ladder a value is
     * within about 25 % of the true one). A namespace without I/O yet has count 0. On the spdk engine one entry,
     * op {@code all}: its I/O since the namespace was added, from SPDK's latency histogram of its bdev
     * ({@link SpdkMeters#latency}).
     */
    public List<LatencyPercentiles> latency(String nqn, int nsid) {
        SpdkMeters sm = spdk;
        if (sm != null) {
            return List.of(sm.latency(nqn, nsid));
        }
        NamespaceMeters m = byKey.get(nqn + ' ' + nsid);
        List<LatencyPercentiles> out = new ArrayList<>();
        out.add(m == null ? LatencyPercentiles.none(MetricNames.OP_READ) : percentiles(MetricNames.OP_READ, m.readLatency()));
        out.add(m == null ? LatencyPercentiles.none(MetricNames.OP_WRITE) : percentiles(MetricNames.OP_WRITE, m.writeLatency()));
        return out;
    }

    static LatencyPercentiles percentiles(String op, Timer timer) {
        HistogramSnapshot snap = timer.takeSnapshot();
        long count = snap.count();
        double max = snap.max(TimeUnit.NANOSECONDS);
        double[] values = new double[PERCENTILES.length];
        for (int i = 0; i < values.length; i++) {
            double v = count == 0 ? 0 : quantile(snap.histogramCounts(), count, PERCENTILES[i], max);
            values[i] = max > 0 ? Math.min(max, v) : v; // the max is windowed: 0 once no command came for a while
        }
        return new LatencyPercentiles(op, count, values[0] / 1e3, values[1] / 1e3, values[2] / 1e3, values[3] / 1e3,
            max / 1e3);
    }

    /**
     * The {@code q} quantile, in nanoseconds, of cumulative bucket counts (Prometheus' {@code histogram_quantile}:
     * linear within the bucket that holds it); above the last finite bound, {@code max}.
     */
    static double quantile(CountAtBucket[] buckets, long count, double q,
                           double max) {
        double rank = q * count;
        double lowerBound = 0;
        double lowerCount = 0;
        for (CountAtBucket b : buckets) {
            double upper = b.bucket(TimeUnit.NANOSECONDS);
            if (Double.isInfinite(upper)) {
                break;
            }
            if (b.count() >= rank) {
                double inBucket = b.count() - lowerCount;
                return inBucket <= 0 ? upper : lowerBound + (upper - lowerBound) * (rank - lowerCount) / inBucket;
            }
            lowerBound = upper;
            lowerCount = b.count();
        }
        return Math.max(max, lowerBound);
    }

    // ------------------------------------------------------------------ the observer (poll-group threads)

    private final class Observer implements IoObserver {
        @Override
        public void ioCompleted(IoNamespace ns, int opcode, int bytes, long latencyNanos, int status) {
            namespace(ns).record(opcode, bytes, latencyNanos, status);
        }

        /**
         * The namespace's meters, then (not for fabrics commands) the controller's and its host's counts and the
         * slowest-I/O list: one map lookup, two sets of {@link java.util.concurrent.atomic.LongAdder} additions and
         * two volatile reads more than the namespace alone.
         */
        @Override
        public void ioCompleted(IoCommand req, int bytes, long latencyNanos, long nowNanos) {
            int opcode = req.opcode();
            int status = req.status();
            namespace(req.namespace()).record(opcode, bytes, latencyNanos, status);
            if (opcode == Opcodes.FABRICS) {
                return;
            }
            ControllerIo c = controller(req.controller());
            c.counts.record(opcode, bytes, latencyNanos, status);
            c.hostIo.counts.record(opcode, bytes, latencyNanos, status);
            slow.offer(c.subsystem, req.nsid(), c.host, req.controller().cntlid(), req.qid(), opcode,
                req.slba(), req.nlb(), bytes, latencyNanos, nowNanos, status);
        }

        @Override
        public void adminError(String subsystemNqn, int opcode, int status) {
            subsystem(subsystemNqn).adminErrors.increment(status);
        }

        @Override
        public void connectionOpened(String transport) {
            transport(transport).opened();
        }

        @Override
        public void connectionClosed(String transport) {
            transport(transport).closed();
        }

        @Override
        public void queueConnected(String transport, int qid) {
            transport(transport).queueConnected(qid);
        }

        @Override
        public void transportError(String transport, int fes) {
            transport(transport).error(fes);
        }

        @Override
        public void connectTimedOut(String transport) {
            transport(transport).connectTimedOut();
        }

        @Override
        public void connectionRefused(String transport, String limit) {
            transport(transport).connectionRefused(limit);
        }

        @Override
        public void controllerLimitReached(String subsystemNqn) {
            subsystem(subsystemNqn).controllerLimitRefusals.increment();
        }

        @Override
        public void keepAliveExpired(String subsystemNqn) {
            subsystem(subsystemNqn).keepAliveExpired.increment();
        }

        @Override
        public void authFailed(String subsystemNqn, String reason) {
            subsystem(subsystemNqn).authFailures.increment();
        }
    }
}
