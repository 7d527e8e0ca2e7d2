package io.nvmf4j;

import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.BlockDevices;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.runtime.PollGroups;
import io.nvmf4j.transport.tcp.TcpTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A running target built from one configuration document: block devices, subsystems with their
 * namespaces, hosts and listeners, the poll groups and the NVMe/TCP transport.
 */
public final class NvmfTarget implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NvmfTarget.class);

    private final TargetConfig config;
    private final Target target = new Target();
    private final Map<String, BlockDevice> bdevs = new LinkedHashMap<>();
    private final Map<ListenerConfig, InetSocketAddress> bound = new LinkedHashMap<>();
    private PollGroups pollGroups;
    private TcpTransport tcp;
    private boolean closed;

    private NvmfTarget(TargetConfig config) {
        this.config = config;
    }

    /**
     * Validates the document, fills in missing identities (in memory; the caller persists them), opens
     * the block devices, builds the subsystems and binds every listener. On failure everything opened so
     * far is closed again.
     */
    public static NvmfTarget start(TargetConfig config) throws IOException {
        ConfigValidator.validate(config);
        ConfigStore.assignIdentities(config);
        NvmfTarget t = new NvmfTarget(config);
        try {
            t.open();
            return t;
        } catch (IOException | RuntimeException e) {
            t.close();
            throw e;
        }
    }

    private void open() throws IOException {
        for (BdevConfig b : config.bdevs) {
            bdevs.put(b.name, BlockDevices.create(b));
        }
        for (SubsystemConfig s : config.subsystems) {
            target.addSubsystem(buildSubsystem(s));
        }
        pollGroups = new PollGroups(config.cores, config.idleStrategy);
        tcp = new TcpTransport(new CommandDispatcher(target), config.tcp, pollGroups);
        for (SubsystemConfig s : config.subsystems) {
            for (ListenerConfig l : s.listeners) {
                if (!bound.containsKey(l)) {
                    bound.put(l, tcp.listen(l));
                }
            }
        }
        LOG.info("target up: {} subsystem(s), {} bdev(s), {}", config.subsystems.size(), bdevs.size(),
            pollGroups.describe());
    }

    private Subsystem buildSubsystem(SubsystemConfig c) {
        Subsystem s = new Subsystem(c.nqn, false, c.serial, c.model, Target.FIRMWARE, c.maxNamespaces, c.minCntlid,
            c.maxCntlid, c.allowAnyHost);
        s.hosts().addAll(c.hosts);
        s.listeners().addAll(c.listeners);
        for (NamespaceConfig n : c.namespaces) {
            s.addNamespace(new Namespace(n.nsid, bdevs.get(n.bdev), HexFormat.of().parseHex(n.nguid),
                uuidBytes(n.uuid), n.eui64 == null ? null : HexFormat.of().parseHex(n.eui64)));
        }
        return s;
    }

    private static byte[] uuidBytes(String uuid) {
        UUID u = UUID.fromString(uuid);
        return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits())
            .array();
    }

    public TargetConfig config() {
        return config;
    }

    public Target target() {
        return target;
    }

    /** Listener as configured → address actually bound (differs when the configured port is 0). */
    public Map<ListenerConfig, InetSocketAddress> listeners() {
        return new LinkedHashMap<>(bound);
    }

    /** The TCP addresses actually bound, in config order. */
    public List<InetSocketAddress> tcpListenAddresses() {
        return new ArrayList<>(bound.values());
    }

    /** Disconnects every host, stops the poll groups, flushes and closes the block devices. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (tcp != null) {
            tcp.close();
        }
        for (Controller c : target.allControllers()) {
            c.destroy("target shutting down");
        }
        if (pollGroups != null) {
            pollGroups.close();
        }
        for (BlockDevice b : bdevs.values()) {
            try {
                b.close();
            } catch (RuntimeException e) {
                LOG.warn("closing bdev {}: {}", b.name(), e.toString());
            }
        }
        LOG.info("target stopped");
    }
}
