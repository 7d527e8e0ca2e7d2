package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A block device. {@code type} is {@code malloc} (off-heap RAM), {@code null} (discards writes,
 * reads zeros), {@code file} (regular file or block device at {@code path}), {@code rbd} (a Ceph RBD
 * image: {@code pool}, {@code image}, {@code cephConf}, {@code clientName}, {@code keyring}; java engine only)
 * or {@code error} (fault injection over the bdev named by {@code base}; java engine only).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class BdevConfig {
    /**
     * Not a type a document gives: the bdev a namespace names as {@code <pool>/<volume>}, a volume of a pool
     * ({@link TargetConfig#bdev}).
     */
    public static final String TYPE_VOLUME = "volume";
    public static final int DEFAULT_IO_WORKERS = 8;
    public static final int MAX_IO_WORKERS = 256;
    public static final int DEFAULT_IO_QUEUE_DEPTH = 1024;
    public static final int MAX_IO_QUEUE_DEPTH = 65536;
    /** {@code error} bdevs: commands a {@code timeout} injection holds at once unless {@link #maxHeldCommands}. */
    public static final int DEFAULT_MAX_HELD_COMMANDS = 1024;
    public static final int MAX_MAX_HELD_COMMANDS = 65536;
    /** {@code file} {@link #ioEngine}: io_uring where the kernel allows it, else worker threads. */
    public static final String IO_ENGINE_AUTO = "auto";
    /** {@code file} {@link #ioEngine}: io_uring, or the bdev is not created. */
    public static final String IO_ENGINE_URING = "io_uring";
    /** {@code file} {@link #ioEngine}: worker threads only. */
    public static final String IO_ENGINE_THREADS = "threads";
    public static final java.util.List<String> IO_ENGINES = java.util.List.of(IO_ENGINE_AUTO, IO_ENGINE_URING,
        IO_ENGINE_THREADS);
    public static final String DEFAULT_RBD_CLIENT = "client.admin";
    public static final int DEFAULT_RBD_TIMEOUT_SECONDS = 15;
    public static final int MAX_RBD_TIMEOUT_SECONDS = 300;
    /**
     * {@link #osdOpTimeoutSeconds} by default: above Ceph's own detection of a failed OSD with its defaults
     * ({@code osd_heartbeat_grace} 20 s after the last answer, the peers checking every {@code osd_heartbeat_interval}
     * 6 s, then the new OSD map and peering of the PGs, a few seconds), so that an I/O waits out an OSD failover
     * Ceph recovers from instead of failing; and below the default Command Quiesce Time (50 s) by the 5 s librbd
     * takes at most to deliver the completion.
     */
    public static final int DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS = 45;
    public static final int MAX_RBD_OSD_OP_TIMEOUT_SECONDS = 60;

    public String name;
    public String type;
    /** Logical block size in bytes: 512 or 4096. */
    public int blockSize = 512;
    /** Capacity in blocks; for {@code file} 0 means "the file's current size". */
    @Range(min = 0)
    public long numBlocks;
    /** {@code file} only: path of the regular file or block device. */
    public String path;
    /** {@code file} only: open with O_DIRECT. */
    public boolean directIo;
    /**
     * {@code file} only: worker threads, i.e. I/Os the device runs at once (null: {@link #DEFAULT_IO_WORKERS}).
     * Requests beyond them wait in order.
     */
    @Range(min = 1, max = MAX_IO_WORKERS)
    public Integer ioWorkers;
    /**
     * {@code file} only: requests that can wait for a worker in preallocated slots (null:
     * {@link #DEFAULT_IO_QUEUE_DEPTH}); more still wait (the queue grows), none is refused.
     */
    @Range(min = 1, max = MAX_IO_QUEUE_DEPTH)
    public Integer ioQueueDepth;
    /**
     * {@code file} only: how I/O reaches the kernel (null: {@link #IO_ENGINE_AUTO}). {@code auto}: each poll group
     * submits to and reaps from its own io_uring ring, no thread switch per I/O; where io_uring is missing or
     * refused (an old kernel, {@code kernel.io_uring_disabled}, a container's seccomp filter) the {@link #ioWorkers}
     * threads do it, and the log says which at creation. {@code io_uring}: the same, but the bdev is not created
     * where io_uring is unavailable. {@code threads}: always the worker threads.
     */
    public String ioEngine;
    /**
     * {@code error} only: the bdev it wraps (listed before it). Its geometry is the base's; the base can back
     * no namespace and no other error bdev while wrapped. Failures are injected at run time through the API.
     */
    public String base;
    /**
     * {@code error} only: commands a {@code timeout} injection holds at once (null:
     * {@link #DEFAULT_MAX_HELD_COMMANDS}); one more fails at once with Command Interrupted instead of being held.
     */
    public Integer maxHeldCommands;
    /** {@code rbd} only: the RADOS pool holding the image. */
    public String pool;
    /** {@code rbd} only: the RBD image's name in {@link #pool}. */
    public String image;
    /** {@code rbd} only: the Ceph config file (its {@code mon host}); null: Ceph's default search (/etc/ceph). */
    public String cephConf;
    /** {@code rbd} only: the Ceph client ("client.NAME"; null: {@link #DEFAULT_RBD_CLIENT}). */
    public String clientName;
    /** {@code rbd} only: the keyring with the client's key (null: the config file's or Ceph's default). */
    public String keyring;
    /**
     * {@code rbd} only: create the image (numBlocks x blockSize bytes) when it does not exist; otherwise a missing
     * image is an error (null: false; absent from other bdevs' JSON).
     */
    public Boolean create;
    /**
     * {@code rbd} only: seconds a monitor may take to answer before connecting or a control call fails (null:
     * {@link #DEFAULT_RBD_TIMEOUT_SECONDS}); a cluster that is down is an error at creation, not a hang. I/O has
     * its own bound, {@link #osdOpTimeoutSeconds}.
     */
    public Integer timeoutSeconds;
    /**
     * {@code rbd} only: seconds an OSD may take to answer an I/O before librados gives up on it
     * ({@code rados_osd_op_timeout}; null: {@link #DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS}). It must sit above the
     * cluster's own failure detection (osd_heartbeat_grace + osd_heartbeat_interval + peering) or an OSD failover
     * becomes an I/O error, and below the target's commandQuiesceTimeMs, the bound of a lost controller's commands.
     * A command that times out ends with Command Interrupted (no DNR): its outcome is unknown (the OSD may still
     * apply it), so the host retries it on the same path (docs/reservations.md, "Timed-out commands").
     */
    public Integer osdOpTimeoutSeconds;
    /**
     * {@code rbd} only: librbd's client-side cache ({@code rbd_cache}; null: false). Off, every write is on the OSDs
     * when it completes and reads see what any gateway wrote; Identify then reports no volatile write cache. On, a
     * write may be acknowledged before the OSDs have it and reads are ordered only within this client: for an image
     * that no other gateway serves only (refused with reservations shared or exclusiveLock).
     */
    public Boolean cache;
    /**
     * {@code rbd} only: hold the image's exclusive lock while a listener of this target is {@code optimized} for the
     * namespace's ANA group, and give it up when none is (null: false, librbd's automatic locking). For two gateways
     * of one image: the optimized one takes the lock over, breaking (and so blocklisting) a previous owner's.
     */
    public Boolean exclusiveLock;

    public BdevConfig() {
    }

    public BdevConfig(String name, String type, int blockSize, long numBlocks) {
        this.name = name;
        this.type = type;
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
    }

    public int ioWorkersOrDefault() {
        return ioWorkers == null ? DEFAULT_IO_WORKERS : ioWorkers;
    }

    public String ioEngineOrDefault() {
        return ioEngine == null ? IO_ENGINE_AUTO : ioEngine;
    }

    public int maxHeldCommandsOrDefault() {
        return maxHeldCommands == null ? DEFAULT_MAX_HELD_COMMANDS : maxHeldCommands;
    }

    public boolean createOrDefault() {
        return Boolean.TRUE.equals(create);
    }

    public String clientNameOrDefault() {
        return clientName == null ? DEFAULT_RBD_CLIENT : clientName;
    }

    public boolean exclusiveLockOrDefault() {
        return exclusiveLock != null && exclusiveLock;
    }

    public int osdOpTimeoutSecondsOrDefault() {
        return osdOpTimeoutSeconds == null ? DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS : osdOpTimeoutSeconds;
    }

    public boolean cacheOrDefault() {
        return Boolean.TRUE.equals(cache);
    }

    public int timeoutSecondsOrDefault() {
        return timeoutSeconds == null ? DEFAULT_RBD_TIMEOUT_SECONDS : timeoutSeconds;
    }

    public int ioQueueDepthOrDefault() {
        return ioQueueDepth == null ? DEFAULT_IO_QUEUE_DEPTH : ioQueueDepth;
    }
}
