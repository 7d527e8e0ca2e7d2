package io.nvmf4j.service.profile;

import io.nvmf4j.config.TargetConfig;

import java.util.BitSet;

/**
 * What a profile asks of the machine, as shipped or scaled down ({@code --scale-down}) to a smaller one: the DPU's
 * numbers on the card; elsewhere the CPU and memory numbers fitted to what the machine has, so that the same
 * profile runs on a test machine or a small Arm guest.
 *
 * <p>Scaled down: the first {@code min(osCpus, online - 1)} online CPUs stay with the OS and the poll groups are
 * pinned one each to the next ones (no more than the profile has), which are the spdk engine's reactor cores too;
 * memory numbers scale by the machine's share of
 * the card's memory (at most 1): the data buffers and shared receive queue of each poll group, the spdk engine's
 * memory, and so the hugepages and the memory that must stay available. The heap follows by itself (a share of
 * the machine's memory, see jvm.options).
 */
public final class Sizing {
    public final boolean scaledDown;
    /** CPUs the machine must have online. */
    public final int cpus;
    /** Memory the machine must have, bytes (90 % of the card's: the firmware and kernel keep some). */
    public final long memoryBytes;
    /** Memory that must be available besides the hugepages: the heap and the profile's reserve, bytes. */
    public final long availableBytes;
    /** 2 MiB hugepages to reserve. */
    public final long hugepages;
    /** The configuration, sized. */
    public final TargetConfig config;
    /** The memory factor applied (1 when not scaled down). */
    public final double memoryFactor;

    private Sizing(boolean scaledDown, int cpus, long memoryBytes, long availableBytes, long hugepages,
                   TargetConfig config, double memoryFactor) {
        this.scaledDown = scaledDown;
        this.cpus = cpus;
        this.memoryBytes = memoryBytes;
        this.availableBytes = availableBytes;
        this.hugepages = hugepages;
        this.config = config;
        this.memoryFactor = memoryFactor;
    }

    /** The profile as shipped, for its card. */
    public static Sizing asShipped(Profile p, TargetConfig config) {
        long card = (long) p.machine.memoryGiB << 30;
        return new Sizing(false, p.machine.cpus, card / 10 * 9, available(p, card, 1), p.hugepagesNeeded(config),
            config, 1);
    }

    /**
     * The profile fitted to a machine with {@code online} CPUs and {@code memTotal} bytes; {@code config} is changed
     * in place (cores, pollGroupCores, spdk.coreMask, rdma.dataBuffers, rdma.srqDepth, spdk.memSizeMb).
     */
    public static Sizing scaledDown(Profile p, TargetConfig config, BitSet online, long memTotal) {
        int n = Math.max(1, online.cardinality());
        int os = Math.min(p.machine.osCpus, n - 1);
        int groups = Math.max(1, Math.min(config.cores, n - os));
        if (online.cardinality() > 0) {
            int[] cpus = online.stream().toArray();
            BitSet pin = new BitSet();
            for (int i = os; i < os + groups; i++) {
                pin.set(cpus[i]);
            }
            config.pollGroupCores = "[" + Profile.cpuList(withPin(pin)) + "]";
            config.spdk.coreMask = config.pollGroupCores;
        } else {
            config.pollGroupCores = null;
        }
        config.cores = groups;
        long card = (long) p.machine.memoryGiB << 30;
        double f = memTotal > 0 ? Math.min(1.0, (double) memTotal / card) : 1.0;
        config.rdma.dataBuffers = Math.max(16, (int) (config.rdma.dataBuffers * f));
        config.rdma.srqDepth = Math.max(256, (int) (config.rdma.srqDepth * f) / 16 * 16);
        config.spdk.memSizeMb = Math.max(512, (int) (config.spdk.memSizeMb * f));
        long machineMemory = memTotal > 0 ? memTotal : card;
        return new Sizing(true, n, Math.min(card / 10 * 9, machineMemory), available(p, machineMemory, f),
            p.hugepagesNeeded(config), config, f);
    }

    private static TargetConfig withPin(BitSet pin) {
        TargetConfig t = new TargetConfig();
        StringBuilder sb = new StringBuilder();
        pin.stream().forEach(c -> sb.append(sb.length() > 0 ? "," : "").append(c));
        t.pollGroupCores = "[" + sb + "]";
        return t;
    }

    private static long available(Profile p, long memory, double f) {
        return (long) (memory * p.heapShare()) + (long) (((long) p.machine.reserveMiB << 20) * f);
    }
}
