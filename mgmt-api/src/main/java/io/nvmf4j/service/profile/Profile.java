package io.nvmf4j.service.profile;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SpdkCores;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * A deployment profile for one DPU model, embedded from {@code dpu-profile/src/profiles/<name>/}: the machine it is
 * made for ({@code profile.json}), the target configuration preset ({@code config.json}, read by the service's own
 * strict reader) and the JVM options ({@code jvm.options}).
 */
public final class Profile {
    /** The profiles shipped, by name. */
    public static final List<String> NAMES = List.of("bluefield2", "bluefield3");
    /** Hugepage size the profiles reserve (the kernel's default on arm64 with 4 KiB pages, and on x86-64). */
    public static final long HUGEPAGE_BYTES = 2L << 20;
    /** Pages reserved beyond the spdk engine's memory ({@code spdk.memSizeMb}) for DPDK's own allocations. */
    public static final long SPDK_SPARE_HUGEPAGES = 64;

    /** The machine a profile is made for ({@code profile.json}). */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Machine {
        public String name;
        public String model;
        /** {@code uname -m} of the card's OS. */
        public String arch;
        /** The Arm core, by name and by the MIDR part number /proc/cpuinfo shows ({@code CPU part}). */
        public String cpuName;
        public String cpuPart;
        public int cpus;
        /** CPUs left to the OS (the first ones); the poll groups are pinned to the others. */
        public int osCpus;
        public int memoryGiB;
        /** Memory beyond the JVM's heap that must stay available (page cache, the OS, native allocations), MiB. */
        public int reserveMiB;
        /** The RDMA driver of the card's ports ({@code mlx5}: ConnectX). */
        public String rdmaDriver;
        public int rdmaPorts;
        /** Port of the RDMA listeners on the uplink addresses. */
        public int listenPort;
        /**
         * The engine the profile runs where it can ({@link EngineChoice}): {@code spdk} on the BlueField profiles,
         * SPDK's data path as in NVIDIA's own DPU storage stack, and the java engine where the spdk engine cannot
         * run. Absent: the document's default, java.
         */
        public String engine;
        public List<String> kernelModules = new ArrayList<>();
    }

    public final Machine machine;
    private final String configJson;
    public final List<String> jvmOptions;

    private Profile(Machine machine, String configJson, List<String> jvmOptions) {
        this.machine = machine;
        this.configJson = configJson;
        this.jvmOptions = jvmOptions;
    }

    /** The profile called {@code name}; {@link IllegalArgumentException} naming the profiles there are otherwise. */
    public static Profile load(String name) {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("no profile '" + name + "' (profiles: " + String.join(", ", NAMES) + ")");
        }
        try {
            Machine m = new ObjectMapper().readValue(resource(name, "profile.json"), Machine.class);
            List<String> jvm = new ArrayList<>();
            for (String line : resource(name, "jvm.options").split("\n")) {
                String t = line.strip();
                if (!t.isEmpty() && !t.startsWith("#")) {
                    jvm.add(t);
                }
            }
            return new Profile(m, resource(name, "config.json"), List.copyOf(jvm));
        } catch (IOException e) {
            throw new UncheckedIOException("profile " + name + ": " + e.getMessage(), e);
        }
    }

    private static String resource(String profile, String file) throws IOException {
        String path = "/io/nvmf4j/profiles/" + profile + "/" + file;
        try (InputStream in = Profile.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IOException(path + " missing from the build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The preset as it ships (no listeners, loopback API). */
    public TargetConfig preset() {
        return ConfigStore.parse(configJson);
    }

    /**
     * The preset with its parameters: one RDMA listener per uplink address on {@link Machine#listenPort}, and the
     * API bound to the management address. Not validated here: callers run {@code ConfigValidator}.
     */
    public TargetConfig config(List<String> uplinks, String mgmtAddress) {
        TargetConfig c = preset();
        c.api.address = mgmtAddress;
        for (SubsystemConfig s : c.subsystems) {
            for (String a : uplinks) {
                ListenerConfig l = new ListenerConfig();
                l.transport = "rdma";
                l.address = a;
                l.port = machine.listenPort;
                s.listeners.add(l);
            }
        }
        return c;
    }

    /** The CPUs the poll groups are pinned to (the unit's CPUAffinity), as systemd writes them: {@code 2-15}. */
    public static String cpuList(TargetConfig c) {
        BitSet cpus = c.pollGroupCores != null ? SpdkCores.parse(c.pollGroupCores) : new BitSet();
        StringBuilder sb = new StringBuilder();
        for (int from = cpus.nextSetBit(0); from >= 0; ) {
            int to = cpus.nextClearBit(from) - 1;
            sb.append(sb.length() > 0 ? "," : "").append(from).append(from == to ? "" : "-" + to);
            from = cpus.nextSetBit(to + 1);
        }
        return sb.toString();
    }

    /**
     * 2 MiB hugepages the engine of {@code c} takes on this profile's ports. The java engine's RDMA buffers: each
     * poll group registers one region per RDMA device, its shared receive queue's capsules
     * ({@code srqDepth x (64 + inCapsuleDataSize)}) and {@code dataBuffers x mdtsBytes}; one page more per region
     * for rounding. The spdk engine's memory: {@code spdk.memSizeMb} (SPDK's RDMA buffers are in it) and
     * {@link #SPDK_SPARE_HUGEPAGES} beyond it, none when it runs without hugepages.
     */
    public long hugepagesNeeded(TargetConfig c) {
        if (!EngineCapabilities.forDocument(c).has(EngineCapabilities.Feature.POLL_GROUP_PLACEMENT)) {
            long bytes = (long) c.spdk.memSizeMb << 20;
            return c.spdk.hugepages ? (bytes + HUGEPAGE_BYTES - 1) / HUGEPAGE_BYTES + SPDK_SPARE_HUGEPAGES : 0;
        }
        long recv = (long) c.rdma.srqDepth * (64 + c.rdma.inCapsuleDataSize);
        long region = (recv + 4095) / 4096 * 4096 + (long) c.rdma.dataBuffers * c.rdma.mdtsBytes;
        long pagesPerRegion = (region + HUGEPAGE_BYTES - 1) / HUGEPAGE_BYTES + 1;
        return pagesPerRegion * c.cores * Math.max(1, machine.rdmaPorts);
    }

    /** The share of memory the heap takes ({@code -XX:MaxRAMPercentage} of {@link #jvmOptions}), 0..1. */
    public double heapShare() {
        for (String o : jvmOptions) {
            if (o.startsWith("-XX:MaxRAMPercentage=")) {
                return Double.parseDouble(o.substring(o.indexOf('=') + 1)) / 100;
            }
        }
        return 0.25; // the JVM's default
    }
}
