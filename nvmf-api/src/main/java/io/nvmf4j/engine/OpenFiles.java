package io.nvmf4j.engine;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The open-files limit (RLIMIT_NOFILE) against what a configuration may hold open, checked when an engine starts.
 *
 * <p>The rule: {@value #BASE} descriptors for the process itself (the JVM and its jars, logs, the poll groups'
 * epoll and io_uring descriptors, the API), one per file bdev and per volume (the file it reads and writes),
 * {@value #PER_RBD} per rbd bdev (its own cluster connection: the monitor and the OSDs it talks to), and one per
 * connection the listeners may hold (each listener's {@code maxConnectionsPerListener}; a connection is one
 * socket, an admin or I/O queue). The first three are opened at start: when they alone exceed the limit the start
 * is refused with a configuration error (it would fail part way with "Too many open files"). When the connections
 * take the total over the limit, the start goes on with a WARN line: connections beyond it fail at accept.
 *
 * <p>The JVM raises its soft limit to the hard one at start, so the limit read here is the hard limit the service
 * was given (systemd: {@code LimitNOFILE}).
 */
public final class OpenFiles {
    private static final Logger LOG = LoggerFactory.getLogger(OpenFiles.class);
    /** Descriptors of the process itself, whatever the configuration. */
    public static final int BASE = 256;
    /** Descriptors an rbd bdev holds: its cluster connection's sockets to the monitor and OSDs, an estimate. */
    public static final int PER_RBD = 16;

    private OpenFiles() {
    }

    /**
     * What a configuration may hold open: at start ({@code base + engine + files}: the process, what the engine holds
     * itself, the bdevs and volumes) and with every connection held.
     */
    public record Need(int base, long engine, long files, long connections) {
        public long atStart() {
            return base + engine + files;
        }

        public long total() {
            return atStart() + connections;
        }

        @Override
        public String toString() {
            return BASE + " for the process + " + (engine > 0 ? engine + " held by the engine + " : "") + files
                + " for bdevs and volumes + " + connections
                + " connections the listeners allow (maxConnectionsPerListener) = " + total();
        }
    }

    /** The descriptors {@code c} may need, with none held by the engine itself. */
    public static Need of(TargetConfig c) {
        return of(c, 0);
    }

    /** The descriptors {@code c} may need, {@code engine} of them held by the engine from its start. */
    public static Need of(TargetConfig c, long engine) {
        long files = 0;
        for (BdevConfig b : c.bdevs) {
            files += "file".equals(b.type) ? 1 : "rbd".equals(b.type) ? PER_RBD : 0;
        }
        for (PoolConfig p : c.pools) {
            files += p.volumes.size();
        }
        Set<ListenerConfig> listeners = new HashSet<>();
        for (SubsystemConfig s : c.subsystems) {
            listeners.addAll(s.listeners);
        }
        long connections = 0;
        for (ListenerConfig l : listeners) {
            connections += "rdma".equals(l.transport) ? c.rdma.maxConnectionsPerListener
                : c.tcp.maxConnectionsPerListener;
        }
        return new Need(BASE, engine, files, connections);
    }

    /** This process's open-files limit, or -1 when the platform does not say. */
    public static long limit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.UnixOperatingSystemMXBean unix
            ? unix.getMaxFileDescriptorCount() : -1;
    }

    /**
     * Logs the limit and what {@code c} needs; throws {@link ConfigException} when the bdevs and volumes alone need
     * more than {@code limit}, warns when the listeners' connections would take it over. A {@code limit} below 0
     * (unknown) checks nothing.
     */
    public static void check(TargetConfig c, long limit) {
        check(c, limit, 0);
    }

    /**
     * As {@link #check(TargetConfig, long)}, with {@code engine} descriptors the engine holds from its start
     * ({@link EngineProvider#descriptorsAtStart}; the spdk engine: one per 2 MiB hugepage of its memory).
     */
    public static void check(TargetConfig c, long limit, long engine) {
        if (limit < 0) {
            return;
        }
        Need need = of(c, engine);
        if (need.atStart() > limit) {
            String held = engine > 0 ? engine + " held by the engine itself + " : "";
            throw new ConfigException(List.of("open files: the bdevs and volumes need " + need.atStart()
                + " descriptors (" + BASE + " for the process + " + held + need.files() + "), above the limit of "
                + limit + " (RLIMIT_NOFILE; systemd: LimitNOFILE)"));
        }
        if (need.total() > limit) {
            LOG.warn("open files: limit {} (RLIMIT_NOFILE), the configuration may need {}: connections beyond the limit"
                + " fail at accept; raise LimitNOFILE or lower maxConnectionsPerListener", limit, need);
        } else {
            LOG.info("open files: limit {}, the configuration may need {}", limit, need);
        }
    }
}
