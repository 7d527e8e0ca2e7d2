package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.nvmf4j.runtime.SocketIoNames;

import java.util.ArrayList;
import java.util.List;

/**
 * The whole target as one JSON document: poll-group cores, transport options, block devices and
 * subsystems (each with its namespaces, allowed hosts and listeners).
 *
 * <p>Plain mutable data; {@link ConfigValidator} checks it and {@link ConfigStore} reads and writes it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class TargetConfig {
    /**
     * Which engine carries the target: {@code java} (default; our own data path) or {@code spdk} (SPDK's,
     * through spdk-jni). Read at start only.
     */
    public String engine = "java";
    /**
     * Accept subsystem and host names that are not valid NQNs (Linux nvmet accepts any name, blktests uses
     * {@code blktests-subsystem-1}); off by default: names must follow the NVMe spec's NQN rules ({@link Nqn}).
     */
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public boolean allowLegacyNqns;
    /** Number of poll groups (threads that own queues). */
    @Range(min = 1, max = 256)
    public int cores = 2;
    /**
     * The CPUs the java engine's poll groups are pinned to, one each in order, as a list ({@code [2-7]}) or a hex
     * mask ({@code 0xfc}); it names exactly {@code cores} CPUs. Absent (default): not pinned. Read at start only.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public String pollGroupCores;
    /** Idle strategy of the poll groups: {@code busy}, {@code backoff} (default) or {@code interrupt}. */
    public String idleStrategy = "backoff";
    /**
     * The poll groups' socket I/O, the kind of event loop they (and the acceptor) run on: {@code epoll} (absent: the
     * default), {@code io_uring} (Netty's io_uring transport; where the kernel, a seccomp filter or a missing native
     * library refuses it the poll groups run on epoll, said once in the log at start) or {@code nio}. Java engine.
     * Read at start only.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public String socketIo;
    /**
     * DH-HMAC-CHAP: a queue whose host must authenticate and has not done so this many milliseconds after its
     * Connect is failed (the admin queue with its controller), whatever its KATO; 1000..600000, default 10000.
     * Java engine (SPDK's target keeps its own). Read at start.
     */
    @Range(min = MIN_AUTH_TIMEOUT_MS, max = MAX_AUTH_TIMEOUT_MS)
    public int authTimeoutMs = DEFAULT_AUTH_TIMEOUT_MS;
    public static final int DEFAULT_AUTH_TIMEOUT_MS = 10_000;
    public static final int MIN_AUTH_TIMEOUT_MS = 1_000;
    public static final int MAX_AUTH_TIMEOUT_MS = 600_000;
    /**
     * Command Quiesce Time (Identify Controller CQT, milliseconds): once a controller is lost (its admin queue closed,
     * its keep-alive expired, CC.EN cleared) the commands it had started on a device end within this bound, so a
     * host that waits this long after losing a path may retry elsewhere without an old write landing after its
     * retry. The controller's teardown waits up to this for its device commands (docs/reservations.md, "Command
     * Quiesce Time"); an {@code rbd} bdev's {@code osdOpTimeoutSeconds} must stay below it.
     * {@value #MIN_COMMAND_QUIESCE_TIME_MS}..{@value #MAX_COMMAND_QUIESCE_TIME_MS} (the field is 16 bits),
     * null: {@value #DEFAULT_COMMAND_QUIESCE_TIME_MS}. Java engine. Read at start.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Range(min = MIN_COMMAND_QUIESCE_TIME_MS, max = MAX_COMMAND_QUIESCE_TIME_MS)
    public Integer commandQuiesceTimeMs;
    public static final int DEFAULT_COMMAND_QUIESCE_TIME_MS = 50_000;
    public static final int MIN_COMMAND_QUIESCE_TIME_MS = 100;
    public static final int MAX_COMMAND_QUIESCE_TIME_MS = 65_535;
    /** NVMe/TCP transport options. */
    public TcpTransportConfig tcp = new TcpTransportConfig();
    /** NVMe/RDMA transport options. */
    public RdmaTransportConfig rdma = new RdmaTransportConfig();
    /** Settings of the spdk engine. */
    public SpdkConfig spdk = new SpdkConfig();
    /**
     * Where file bdevs may live ({@link StorageConfig}); absent: nowhere (the service writes its state directory
     * here at first start).
     */
    public StorageConfig storage;
    public List<BdevConfig> bdevs = new ArrayList<>();
    /**
     * Storage pools with their volumes and snapshots ({@link PoolConfig}); a namespace names a volume as its bdev by
     * {@code <pool>/<volume>}. Absent: none.
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public List<PoolConfig> pools = new ArrayList<>();
    public List<SubsystemConfig> subsystems = new ArrayList<>();
    /** QoS groups (tenants): namespaces whose I/O together shares limits ({@link QosGroupConfig}); absent: none. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public List<QosGroupConfig> qosGroups = new ArrayList<>();
    /** Other discovery services to list in the discovery log. */
    public List<ReferralConfig> referrals = new ArrayList<>();
    /**
     * The discovery subsystem's TLS PSKs per host ({@link DiscoveryConfig}); absent: none (a host discovers over a
     * listener whose secure channel is not {@code required}, or not at all over TLS).
     */
    public DiscoveryConfig discovery;
    /** Management API settings (read by the service). */
    public ApiConfig api = new ApiConfig();
    /**
     * Prometheus metrics settings, read by the service at start (a change applies at the next start); absent: the
     * defaults.
     */
    public MetricsConfig metrics;

    public int commandQuiesceTimeMsOrDefault() {
        return commandQuiesceTimeMs == null ? DEFAULT_COMMAND_QUIESCE_TIME_MS : commandQuiesceTimeMs;
    }

    /**
     * The bdev named {@code name}, or null: one of {@link #bdevs}, or a pool's volume named {@code <pool>/<volume>}
     * (then a {@link BdevConfig} of type {@value BdevConfig#TYPE_VOLUME} made for the question, with the volume's
     * geometry: changing it changes nothing).
     */
    public BdevConfig bdev(String name) {
        if (name != null && name.indexOf('/') >= 0) {
            return volumeBdev(name);
        }
        if (bdevs == null) {
            return null; // "bdevs": null in a document; the validator says so
        }
        for (BdevConfig b : bdevs) {
            if (b != null && name != null && name.equals(b.name)) {
                return b;
            }
        }
        return null;
    }

    /** The QoS group named {@code name}, or null. */
    public QosGroupConfig qosGroup(String name) {
        if (qosGroups == null) {
            return null;
        }
        for (QosGroupConfig g : qosGroups) {
            if (g != null && g.name != null && g.name.equals(name)) {
                return g;
            }
        }
        return null;
    }

    /** The pool named {@code name}, or null. */
    public PoolConfig pool(String name) {
        if (pools == null) {
            return null;
        }
        for (PoolConfig p : pools) {
            if (p != null && p.name != null && p.name.equals(name)) {
                return p;
            }
        }
        return null;
    }

    private BdevConfig volumeBdev(String name) {
        int slash = name.indexOf('/');
        PoolConfig p = pool(name.substring(0, slash));
        VolumeConfig v = p == null ? null : p.volume(name.substring(slash + 1));
        if (v == null) {
            return null;
        }
        BdevConfig b = new BdevConfig(name, BdevConfig.TYPE_VOLUME, v.blockSize, v.numBlocks);
        b.pool = p.name;
        return b;
    }

    /** {@link #socketIo}, or {@code epoll} where it is absent. */
    public String socketIoOrDefault() {
        return socketIo == null ? SocketIoNames.EPOLL : socketIo;
    }
}
