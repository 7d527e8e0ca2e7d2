package io.nvmf4j.config;

import io.nvmf4j.engine.Engines;
import io.nvmf4j.runtime.IdleStrategies;
import io.nvmf4j.transport.TransportRegistry;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/** Checks a whole configuration document and reports every problem with its field path. */
public final class ConfigValidator {
    private static final Pattern HEX32 = Pattern.compile("[0-9a-fA-F]{32}");
    private static final Pattern HEX16 = Pattern.compile("[0-9a-fA-F]{16}");
    private static final Pattern IPV4 =
        Pattern.compile("((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");
    private static final int NQN_MAX_BYTES = 223;
    /** The transport types a listener or referral may name. */
    private static final TransportRegistry TRANSPORTS = TransportRegistry.builtIn();

    private ConfigValidator() {
    }

    public static void validate(TargetConfig c) {
        List<String> p = new ArrayList<>();
        if (!Engines.isKnown(c.engine)) {
            p.add("engine: must be " + Engines.describe() + ", got " + c.engine);
        }
        if (c.cores < 1 || c.cores > 256) {
            p.add("cores: must be 1..256, got " + c.cores);
        }
        if (c.idleStrategy == null || !IdleStrategies.isValid(c.idleStrategy)) {
            p.add("idleStrategy: must be busy, backoff or interrupt, got " + c.idleStrategy);
        }
        if (c.spdk == null) {
            p.add("spdk: missing");
        } else {
            validateSpdk(c.spdk, p);
        }
        if (c.tcp == null) {
            p.add("tcp: missing");
        } else {
            validateTcp(c.tcp, p);
        }
        if (c.rdma == null) {
            p.add("rdma: missing");
        } else {
            validateRdma(c.rdma, p);
        }
        Set<String> bdevNames = new HashSet<>();
        if (c.bdevs == null) {
            p.add("bdevs: must be a list (may be empty)");
        } else {
            for (int i = 0; i < c.bdevs.size(); i++) {
                if (c.bdevs.get(i) == null) {
                    p.add("bdevs[" + i + "]: null entry");
                } else {
                    validateBdev(c.bdevs.get(i), "bdevs[" + i + "]", bdevNames, p);
                }
            }
        }
        Set<String> nqns = new HashSet<>();
        Set<String> usedBdevs = new HashSet<>();
        if (c.subsystems == null) {
            p.add("subsystems: must be a list (may be empty)");
        } else {
            for (int i = 0; i < c.subsystems.size(); i++) {
                if (c.subsystems.get(i) == null) {
                    p.add("subsystems[" + i + "]: null entry");
                } else {
                    validateSubsystem(c, c.subsystems.get(i), "subsystems[" + i + "]", nqns, usedBdevs, p);
                }
            }
        }
        if (c.referrals == null) {
            p.add("referrals: must be a list (may be empty)");
        } else {
            Set<ReferralConfig> seen = new HashSet<>();
            for (int i = 0; i < c.referrals.size(); i++) {
                ReferralConfig r = c.referrals.get(i);
                String at = "referrals[" + i + "]";
                if (r == null) {
                    p.add(at + ": null entry");
                    continue;
                }
                if (!TRANSPORTS.has(r.transport)) {
                    p.add(at + ".transport: must be " + TRANSPORTS.describe() + ", got " + r.transport);
                }
                if (r.address == null || !isIpLiteral(r.address)) {
                    p.add(at + ".address: must be an IPv4 or IPv6 literal, got " + r.address);
                }
                if (r.port < 1 || r.port > 65535) {
                    p.add(at + ".port: must be 1..65535, got " + r.port);
                }
                if (!seen.add(r)) {
                    p.add(at + ": duplicate referral " + r);
                }
            }
        }
        if (c.api == null) {
            p.add("api: missing");
        } else {
            if (c.api.address == null || !isIpLiteral(c.api.address)) {
                p.add("api.address: must be an IPv4 or IPv6 literal, got " + c.api.address);
            }
            if (c.api.port < 0 || c.api.port > 65535) {
                p.add("api.port: must be 0..65535 (0 disables the API), got " + c.api.port);
            }
            if ((c.api.tlsCert == null) != (c.api.tlsKey == null)) {
                p.add("api.tlsCert/api.tlsKey: give both for TLS, or neither");
            }
            if (c.api.token != null && c.api.token.length() < 16) {
                p.add("api.token: must be at least 16 characters");
            }
        }
        validateMetrics(c.metrics, p);
        if (!p.isEmpty()) {
            throw new ConfigException(p);
        }
    }

    /** {@code metrics} (optional): latency bucket bounds positive, strictly ascending, bounded in count and size. */
    private static void validateMetrics(MetricsConfig m, List<String> p) {
        List<Long> b = m == null ? null : m.latencyBucketsMicros;
        if (b == null) {
            return;
        }
        if (b.isEmpty() || b.size() > MetricsConfig.MAX_LATENCY_BUCKETS) {
            p.add("metrics.latencyBucketsMicros: must list 1.." + MetricsConfig.MAX_LATENCY_BUCKETS
                + " bucket bounds, got " + b.size());
            return;
        }
        for (int i = 0; i < b.size(); i++) {
            Long v = b.get(i);
            String at = "metrics.latencyBucketsMicros[" + i + "]";
            if (v == null || v <= 0 || v > MetricsConfig.MAX_LATENCY_BUCKET_MICROS) {
                p.add(at + ": must be 1.." + MetricsConfig.MAX_LATENCY_BUCKET_MICROS + " (microseconds), got " + v);
            } else if (i > 0 && b.get(i - 1) != null && v <= b.get(i - 1)) {
                p.add(at + ": must be greater than the bound before it (" + b.get(i - 1) + "), got " + v);
            }
        }
    }

    private static void validateSpdk(SpdkConfig s, List<String> p) {
        try {
            SpdkCores.parse(s.coreMask);
        } catch (IllegalArgumentException e) {
            p.add("spdk.coreMask: " + e.getMessage());
        }
        if (s.memSizeMb < 512 || s.memSizeMb > 1 << 20) {
            // below 512 MiB SPDK's default pools (65535 bdev I/Os, the iobuf buffers) do not fit
            p.add("spdk.memSizeMb: must be 512..1048576, got " + s.memSizeMb);
        }
        if (s.callTimeoutMs < 1000 || s.callTimeoutMs > 600_000) {
            p.add("spdk.callTimeoutMs: must be 1000..600000, got " + s.callTimeoutMs);
        }
        if (s.sharedBuffers < 0 || s.sharedBuffers > 1 << 20) {
            p.add("spdk.sharedBuffers: must be 0 (SPDK's default)..1048576, got " + s.sharedBuffers);
        }
    }

    private static void validateTcp(TcpTransportConfig t, List<String> p) {
        if (t.inCapsuleDataSize < 0 || t.inCapsuleDataSize > 131072 || t.inCapsuleDataSize % 16 != 0) {
            p.add("tcp.inCapsuleDataSize: must be a multiple of 16 in 0..131072, got " + t.inCapsuleDataSize);
        }
        if (t.maxQueueDepth < 16 || t.maxQueueDepth > 1024) {
            p.add("tcp.maxQueueDepth: must be 16..1024, got " + t.maxQueueDepth);
        }
        if (t.maxIoQueues < 1 || t.maxIoQueues > 128) {
            p.add("tcp.maxIoQueues: must be 1..128, got " + t.maxIoQueues);
        }
        if (t.mdtsBytes < 4096 || t.mdtsBytes > (8 << 20) || Integer.bitCount(t.mdtsBytes) != 1) {
            p.add("tcp.mdtsBytes: must be a power of two from 4096 to 8388608, got " + t.mdtsBytes);
        }
        if (t.maxH2cData < 4096 || t.maxH2cData % 4 != 0 || t.maxH2cData > (8 << 20)) {
            p.add("tcp.maxH2cData: must be a multiple of 4 from 4096 to 8388608, got " + t.maxH2cData);
        }
        if (t.connectTimeoutMs != 0 && (t.connectTimeoutMs < 100 || t.connectTimeoutMs > 3_600_000)) {
            p.add("tcp.connectTimeoutMs: must be 0 (no limit) or 100..3600000, got " + t.connectTimeoutMs);
        }
    }

    private static void validateRdma(RdmaTransportConfig r, List<String> p) {
        if (r.inCapsuleDataSize < 0 || r.inCapsuleDataSize > 131072 || r.inCapsuleDataSize % 16 != 0) {
            p.add("rdma.inCapsuleDataSize: must be a multiple of 16 in 0..131072, got " + r.inCapsuleDataSize);
        }
        if (r.maxQueueDepth < 16 || r.maxQueueDepth > 1024) {
            p.add("rdma.maxQueueDepth: must be 16..1024, got " + r.maxQueueDepth);
        }
        if (r.maxIoQueues < 1 || r.maxIoQueues > 128) {
            p.add("rdma.maxIoQueues: must be 1..128, got " + r.maxIoQueues);
        }
        if (r.mdtsBytes < 4096 || r.mdtsBytes > (1 << 20) || Integer.bitCount(r.mdtsBytes) != 1) {
            p.add("rdma.mdtsBytes: must be a power of two from 4096 to 1048576, got " + r.mdtsBytes);
        }
        if (r.srqDepth < 16 || r.srqDepth > 16384) {
            p.add("rdma.srqDepth: must be 16..16384, got " + r.srqDepth);
        }
        if (r.dataBuffers < 4 || r.dataBuffers > 16384 || (long) r.dataBuffers * r.mdtsBytes > Integer.MAX_VALUE) {
            p.add("rdma.dataBuffers: must be 4..16384 and dataBuffers x mdtsBytes below 2 GiB, got " + r.dataBuffers);
        }
        if (r.cqSize < 256 || r.cqSize > (1 << 20)) {
            p.add("rdma.cqSize: must be 256..1048576, got " + r.cqSize);
        }
        if (r.maxReadDepth < 1 || r.maxReadDepth > 255) {
            p.add("rdma.maxReadDepth: must be 1..255, got " + r.maxReadDepth);
        }
        if (r.maxParkedCapsules < 1 || r.maxParkedCapsules > 1024) {
            p.add("rdma.maxParkedCapsules: must be 1..1024, got " + r.maxParkedCapsules);
        }
        if (r.rnrRetryCount < 0 || r.rnrRetryCount > 7) {
            p.add("rdma.rnrRetryCount: must be 0..7 (7: retry for ever), got " + r.rnrRetryCount);
        }
    }

    private static void validateBdev(BdevConfig b, String at, Set<String> names, List<String> p) {
        if (b.name == null || b.name.isBlank()) {
            p.add(at + ".name: missing");
        } else if (!names.add(b.name)) {
            p.add(at + ".name: duplicate bdev name '" + b.name + "'");
        }
        if (b.blockSize != 512 && b.blockSize != 4096) {
            p.add(at + ".blockSize: must be 512 or 4096, got " + b.blockSize);
        }
        if (b.type == null) {
            p.add(at + ".type: missing (malloc, null or file)");
            return;
        }
        switch (b.type) {
            case "malloc", "null" -> {
                if (b.numBlocks <= 0) {
                    p.add(at + ".numBlocks: must be positive for a " + b.type + " bdev");
                }
                if (b.path != null) {
                    p.add(at + ".path: only file bdevs have a path");
                }
                if (b.ioWorkers != null) {
                    p.add(at + ".ioWorkers: only file bdevs have I/O workers");
                }
                if (b.ioQueueDepth != null) {
                    p.add(at + ".ioQueueDepth: only file bdevs have an I/O queue");
                }
            }
            case "file" -> {
                if (b.directIo && b.blockSize < 4096) {
                    p.add(at + ".blockSize: directIo needs 4096-byte blocks, got " + b.blockSize);
                }
                if (b.path == null || b.path.isBlank()) {
                    p.add(at + ".path: missing for a file bdev");
                }
                if (b.numBlocks < 0) {
                    p.add(at + ".numBlocks: must not be negative");
                }
                if (b.ioWorkers != null && (b.ioWorkers < 1 || b.ioWorkers > BdevConfig.MAX_IO_WORKERS)) {
                    p.add(at + ".ioWorkers: must be 1.." + BdevConfig.MAX_IO_WORKERS + ", got " + b.ioWorkers);
                }
                if (b.ioQueueDepth != null && (b.ioQueueDepth < 1 || b.ioQueueDepth > BdevConfig.MAX_IO_QUEUE_DEPTH)) {
                    p.add(at + ".ioQueueDepth: must be 1.." + BdevConfig.MAX_IO_QUEUE_DEPTH + ", got "
                        + b.ioQueueDepth);
                }
            }
            default -> p.add(at + ".type: must be malloc, null or file, got '" + b.type + "'");
        }
    }

    private static void validateSubsystem(TargetConfig c, SubsystemConfig s, String at, Set<String> nqns,
                                          Set<String> usedBdevs, List<String> p) {
        if (!validNqn(s.nqn)) {
            p.add(at + ".nqn: must start with 'nqn.' and be at most " + NQN_MAX_BYTES + " bytes, got " + s.nqn);
        } else if (s.nqn.equals("nqn.2014-08.org.nvmexpress.discovery")) {
            p.add(at + ".nqn: the discovery NQN is reserved");
        } else if (!nqns.add(s.nqn)) {
            p.add(at + ".nqn: duplicate subsystem " + s.nqn);
        }
        if (s.serial != null && (s.serial.isEmpty() || s.serial.length() > 20 || !printableAscii(s.serial))) {
            p.add(at + ".serial: must be 1..20 printable ASCII characters");
        }
        if (s.model == null || s.model.isEmpty() || s.model.length() > 40 || !printableAscii(s.model)) {
            p.add(at + ".model: must be 1..40 printable ASCII characters");
        }
        if (s.maxNamespaces < 1 || s.maxNamespaces > 1024) {
            p.add(at + ".maxNamespaces: must be 1..1024, got " + s.maxNamespaces);
        }
        if (s.minCntlid < 1 || s.maxCntlid > 0xFFEF || s.minCntlid > s.maxCntlid) {
            p.add(at + ".minCntlid/maxCntlid: need 1 <= minCntlid <= maxCntlid <= 65519");
        }
        if (s.hosts == null || s.namespaces == null || s.listeners == null) {
            p.add(at + ": hosts, namespaces and listeners must be lists (may be empty)");
            return;
        }
        for (int i = 0; i < s.hosts.size(); i++) {
            if (!validNqn(s.hosts.get(i))) {
                p.add(at + ".hosts[" + i + "]: not a valid host NQN: " + s.hosts.get(i));
            }
        }
        Set<Integer> nsids = new HashSet<>();
        for (int i = 0; i < s.namespaces.size(); i++) {
            NamespaceConfig n = s.namespaces.get(i);
            String nat = at + ".namespaces[" + i + "]";
            if (n == null) {
                p.add(nat + ": null entry");
                continue;
            }
            if (n.nsid < 1 || n.nsid > s.maxNamespaces) {
                p.add(nat + ".nsid: must be 1.." + s.maxNamespaces + ", got " + n.nsid);
            } else if (!nsids.add(n.nsid)) {
                p.add(nat + ".nsid: duplicate nsid " + n.nsid);
            }
            if (n.bdev == null || c.bdev(n.bdev) == null) {
                p.add(nat + ".bdev: no bdev named '" + n.bdev + "'");
            } else if (!usedBdevs.add(n.bdev)) {
                p.add(nat + ".bdev: bdev '" + n.bdev + "' already backs another namespace");
            }
            if (n.nguid != null && !HEX32.matcher(n.nguid).matches()) {
                p.add(nat + ".nguid: must be 32 hex digits");
            }
            if (n.eui64 != null && !HEX16.matcher(n.eui64).matches()) {
                p.add(nat + ".eui64: must be 16 hex digits");
            }
            if (n.uuid != null) {
                try {
                    UUID.fromString(n.uuid);
                } catch (IllegalArgumentException e) {
                    p.add(nat + ".uuid: not a UUID: " + n.uuid);
                }
            }
        }
        for (int i = 0; i < s.listeners.size(); i++) {
            ListenerConfig l = s.listeners.get(i);
            String lat = at + ".listeners[" + i + "]";
            if (l == null) {
                p.add(lat + ": null entry");
                continue;
            }
            if (!TRANSPORTS.has(l.transport)) {
                p.add(lat + ".transport: must be " + TRANSPORTS.describe() + ", got " + l.transport);
            }
            if (l.address == null || !isIpLiteral(l.address)) {
                p.add(lat + ".address: must be an IPv4 or IPv6 literal, got " + l.address);
            }
            if (l.port < 0 || l.port > 65535) {
                p.add(lat + ".port: must be 0..65535, got " + l.port);
            }
        }
    }

    static boolean validNqn(String nqn) {
        return nqn != null && nqn.startsWith("nqn.") && nqn.length() > 4
            && nqn.getBytes(StandardCharsets.UTF_8).length <= NQN_MAX_BYTES;
    }

    private static boolean printableAscii(String s) {
        return s.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7F);
    }

    /** A dotted-quad IPv4 or an IPv6 literal; never a host name, never a DNS lookup. */
    private static boolean isIpLiteral(String address) {
        if (IPV4.matcher(address).matches()) {
            return true;
        }
        if (!IPV6_CHARS.matcher(address).matches()) {
            return false;
        }
        try {
            InetAddress.getByName(address);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
