package io.nvmf4j.service.metrics;

/**
 * Micrometer meter names and tag keys. The Prometheus names (dots become underscores, counters get
 * {@code _total}, timers {@code _seconds}) are given beside each; the Grafana dashboard queries those.
 */
public final class MetricNames {
    /** {@code nvmf_io_commands_total{subsystem,nsid,op="read|write|other"}}. */
    public static final String IO_COMMANDS = "nvmf.io.commands";
    /** {@code nvmf_io_bytes_total{subsystem,nsid,op="read|write"}}: data bytes of successful commands. */
    public static final String IO_BYTES = "nvmf.io.bytes";
    /** {@code nvmf_io_latency_seconds_{bucket,count,sum,max}{subsystem,nsid,op="read|write"}}. */
    public static final String IO_LATENCY = "nvmf.io.latency";
    /** {@code nvmf_io_errors_total{subsystem,nsid,status="<sct>/0x<sc>"}}. */
    public static final String IO_ERRORS = "nvmf.io.errors";
    /**
     * {@code nvmf_namespace_durability_errors{subsystem,nsid}} (gauge): failed attempts of the namespace's device
     * to make acknowledged writes durable (a failed fdatasync); after the first, its writes and flushes fail.
     */
    public static final String NAMESPACE_DURABILITY_ERRORS = "nvmf.namespace.durability.errors";
    public static final String QOS_DELAYED = "nvmf.qos.delayed";
    public static final String QOS_THROTTLED = "nvmf.qos.throttled";
    public static final String QOS_WAITING = "nvmf.qos.waiting";
    /** {@code nvmf_admin_errors_total{subsystem,status}}: admin commands completed with an error. */
    public static final String ADMIN_ERRORS = "nvmf.admin.errors";
    /** {@code nvmf_keepalive_expired_total{subsystem}}: controllers torn down by their keep-alive timer. */
    public static final String KEEPALIVE_EXPIRED = "nvmf.keepalive.expired";
    /**
     * {@code nvmf_auth_failures_total{subsystem}}: failed DH-HMAC-CHAP authentications (the log line has the host NQN
     * and the reason).
     */
    public static final String AUTH_FAILURES = "nvmf.auth.failures";

    /** {@code nvmf_transport_connections{transport}}: open transport connections (gauge). */
    public static final String TRANSPORT_CONNECTIONS = "nvmf.transport.connections";
    /** {@code nvmf_transport_queues_connected_total{transport,queue="admin|io"}}: successful Connects. */
    public static final String TRANSPORT_QUEUES_CONNECTED = "nvmf.transport.queues.connected";
    /** {@code nvmf_transport_errors_total{transport,fes}}: fatal transport errors (TCP: C2HTermReq FES). */
    public static final String TRANSPORT_ERRORS = "nvmf.transport.errors";
    /**
     * {@code nvmf_transport_connect_timeouts_total{transport}}: connections closed because they had not sent
     * ICReq and completed a Connect within {@code tcp.connectTimeoutMs}.
     */
    public static final String TRANSPORT_CONNECT_TIMEOUTS = "nvmf.transport.connect.timeouts";

    /**
     * {@code nvmf_transport_connections_refused_total{transport,limit}}: connections refused at accept by a listener's
     * {@code limit}, maxConnectionsPerListener or maxConnectionsPerHost.
     */
    public static final String TRANSPORT_CONNECTIONS_REFUSED = "nvmf.transport.connections.refused";
    public static final String TAG_LIMIT = "limit";
    /**
     * {@code nvmf_controller_limit_refusals_total{subsystem}}: admin Connects refused with Controller Busy, every cntlid
     * of the subsystem's minCntlid..maxCntlid in use.
     */
    public static final String CONTROLLER_LIMIT_REFUSALS = "nvmf.controller.limit.refusals";

    /** {@code nvmf_subsystem_controllers{subsystem}} (gauge; the discovery NQN included). */
    public static final String SUBSYSTEM_CONTROLLERS = "nvmf.subsystem.controllers";
    /** {@code nvmf_subsystem_queues{subsystem}}: admin + I/O queues of its live controllers (gauge). */
    public static final String SUBSYSTEM_QUEUES = "nvmf.subsystem.queues";
    /** {@code nvmf_subsystem_namespaces{subsystem}} (gauge). */
    public static final String SUBSYSTEM_NAMESPACES = "nvmf.subsystem.namespaces";
    /**
     * {@code nvmf_pollgroup_busy_seconds_total} (counter): seconds the poll-group threads (spdk engine: SPDK's
     * threads) spent working rather than idle, summed over them; {@code rate()} of it is the busy cores.
     */
    public static final String POLLGROUP_BUSY = "nvmf.pollgroup.busy";
    /**
     * {@code nvmf_pollgroup_allocated_bytes_total} (counter, java engine): heap bytes allocated by the poll-group
     * threads since they started; its growth per I/O shows whether the data path allocates (it should not).
     */
    public static final String POLLGROUP_ALLOCATED_BYTES = "nvmf.pollgroup.allocated";
    /**
     * {@code nvmf_rbd_blocklisted_total} (counter, java engine): times an rbd bdev found its Ceph client blocklisted
     * (another gateway broke its exclusive lock); each fences the bdev until it has reconnected.
     */
    public static final String RBD_BLOCKLISTED = "nvmf.rbd.blocklisted";
    /** {@code nvmf_rbd_reconnected_total} (counter, java engine): rbd bdevs serving again after a blocklist. */
    public static final String RBD_RECONNECTED = "nvmf.rbd.reconnected";
    /**
     * {@code nvmf_rbd_rewatch_failures_total} (counter, java engine): failed attempts of an rbd bdev to watch its
     * image's header again after the watch broke.
     */
    public static final String RBD_REWATCH_FAILURES = "nvmf.rbd.rewatch.failures";
    /** {@code nvmf4j_build_info{version,revision,java,engine}} (gauge, always 1). */
    public static final String BUILD_INFO = "nvmf4j.build.info";

    /**
     * {@code nvmf_spdk_io_latency_seconds_total{subsystem,nsid,op="read|write"}}: the spdk engine's sum of bdev
     * I/O latencies (SPDK keeps sums, not a histogram); mean = its rate / the commands' rate.
     */
    public static final String SPDK_IO_LATENCY = "nvmf.spdk.io.latency.seconds";
    /**
     * {@code nvmf_spdk_io_latency_percentile_seconds{subsystem,nsid,percentile="50|90|99|99.9"}}: the spdk engine's
     * latency percentiles of a namespace's I/O (reads, writes and the rest together) since it was added, from SPDK's
     * latency histogram of its bdev (gauge).
     */
    public static final String SPDK_IO_LATENCY_PERCENTILE = "nvmf.spdk.io.latency.percentile.seconds";
    /** {@code nvmf_spdk_pollgroup_queues{queue="admin|io"}}: queues on SPDK's poll groups now (gauge). */
    public static final String SPDK_POLLGROUP_QUEUES = "nvmf.spdk.pollgroup.queues";
    /** {@code nvmf_spdk_pollgroup_pending_bdev_io}: bdev I/Os SPDK's poll groups are waiting for (gauge). */
    public static final String SPDK_POLLGROUP_PENDING_BDEV_IO = "nvmf.spdk.pollgroup.pending.bdev.io";
    /** {@code nvmf_spdk_pollgroup_completed_io_total}: NVMe I/O commands SPDK's poll groups completed. */
    public static final String SPDK_POLLGROUP_COMPLETED_IO = "nvmf.spdk.pollgroup.completed.io";
    /** {@code nvmf_spdk_pollgroups}: SPDK's NVMe-oF poll groups, one per reactor (gauge). */
    public static final String SPDK_POLLGROUPS = "nvmf.spdk.pollgroups";
    /** {@code nvmf_pool_size_bytes{pool}}: bytes of the pool's file system (gauge). */
    public static final String POOL_SIZE = "nvmf.pool.size";
    /** {@code nvmf_pool_used_bytes{pool}}: bytes in use on it (gauge). */
    public static final String POOL_USED = "nvmf.pool.used";
    /** {@code nvmf_pool_free_bytes{pool}}: bytes a writer can still allocate (gauge). */
    public static final String POOL_FREE = "nvmf.pool.free";
    /** {@code nvmf_pool_watermark_crossings_total{pool}}: times the use rose above the pool's warnPercent. */
    public static final String POOL_WATERMARK_CROSSINGS = "nvmf.pool.watermark.crossings";
    /** {@code nvmf_volume_provisioned_bytes{pool,volume}}: a volume's size (gauge). */
    public static final String VOLUME_PROVISIONED = "nvmf.volume.provisioned";
    /** {@code nvmf_volume_allocated_bytes{pool,volume}}: bytes its file occupies (gauge). */
    public static final String VOLUME_ALLOCATED = "nvmf.volume.allocated";

    /**
     * Prefix of the per-host meters, {@code nvmf_host_io_commands_total{host,op="read|write|other"}},
     * {@code nvmf_host_io_bytes_total{host,op="read|write"}}, {@code nvmf_host_io_latency_seconds_total{host,op}}
     * (sum of latencies; mean = its rate / the commands' rate) and {@code nvmf_host_io_errors_total{host}}.
     */
    public static final String HOST_PREFIX = "nvmf.host";
    /**
     * Prefix of the per-controller meters ({@code metrics.perControllerMeters} only): as {@link #HOST_PREFIX}'s,
     * named {@code nvmf_controller_io_*}, with tags {@code subsystem}, {@code cntlid} and {@code host}.
     */
    public static final String CONTROLLER_PREFIX = "nvmf.controller";

    public static final String TAG_SUBSYSTEM = "subsystem";
    public static final String TAG_HOST = "host";
    public static final String TAG_CNTLID = "cntlid";
    public static final String TAG_NSID = "nsid";
    public static final String TAG_OP = "op";
    public static final String TAG_PERCENTILE = "percentile";
    public static final String TAG_STATUS = "status";
    public static final String TAG_TRANSPORT = "transport";
    public static final String TAG_QUEUE = "queue";
    public static final String TAG_FES = "fes";
    public static final String TAG_POOL = "pool";
    public static final String TAG_VOLUME = "volume";

    public static final String OP_READ = "read";
    public static final String OP_WRITE = "write";
    public static final String OP_OTHER = "other";
    /** The op of the spdk engine's percentiles: reads, writes and the other commands together. */
    public static final String OP_ALL = "all";

    /**
     * Subsystem tag of I/O whose namespace the engine did not resolve (an invalid nsid, or I/O that arrived
     * before {@link Metrics#bind}); never a real NQN, which starts with {@code nqn.}.
     */
    public static final String UNKNOWN_SUBSYSTEM = "unknown";

    private MetricNames() {
    }
}
