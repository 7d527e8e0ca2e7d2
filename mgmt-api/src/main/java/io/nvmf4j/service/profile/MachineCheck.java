package io.nvmf4j.service.profile;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code nvmf4j-target check --profile NAME}: the machine against the profile, one line per check, and for each
 * failure the command that fixes it. {@code simulate} accepts soft-RoCE (rxe) devices in place of the card's
 * ConnectX ports (and skips the Arm core model, which an emulator may not report); {@code scaleDown} checks
 * against the profile fitted to this machine ({@link Sizing}).
 */
public final class MachineCheck {
    /** One check: what was looked at, what was found, and when it failed the fix. */
    public record Result(String name, boolean ok, String found, String fix) {
        public String line() {
            return (ok ? "ok    " : "FAIL  ") + name + ": " + found;
        }
    }

    private MachineCheck() {
    }

    public static List<Result> run(Profile p, MachineFacts m, Sizing s, boolean simulate) {
        List<Result> r = new ArrayList<>();
        Profile.Machine want = p.machine;
        String arch = m.arch();
        r.add(new Result("architecture", want.arch.equals(arch), (arch == null ? "unknown" : arch) + " (profile: "
            + want.arch + ")", "run on the " + want.model + "'s Arm cores with the arm64 package "
            + "(dpu-profile/package.sh builds nvmf4j_<version>_arm64.deb)"));
        var parts = m.cpuParts();
        if (simulate) {
            r.add(new Result("cpu model", true, "not checked (--simulate); " + (parts.isEmpty() ? "no Arm part"
                : "parts " + parts) + ", profile: " + want.cpuName, ""));
        } else {
            r.add(new Result("cpu model", parts.equals(java.util.Set.of(want.cpuPart)), (parts.isEmpty()
                ? "no Arm 'CPU part' in /proc/cpuinfo" : "CPU part " + String.join(",", parts)) + " (profile: "
                + want.cpuName + ", part " + want.cpuPart + ")", "run on a " + want.model + " (" + want.cpuName
                + "), or check --simulate to try the profile elsewhere"));
        }
        int online = m.onlineCpus().cardinality();
        r.add(new Result("cpus", online >= s.cpus, online + " online (profile" + (s.scaledDown ? ", scaled down" : "")
            + ": " + s.cpus + ")", s.scaledDown ? "bring CPUs online: echo 1 > /sys/devices/system/cpu/cpuN/online"
            : "bring all " + s.cpus + " CPUs online (echo 1 > /sys/devices/system/cpu/cpuN/online), or fit the poll "
            + "groups to this machine: check/setup --scale-down"));
        long total = m.meminfo("MemTotal");
        r.add(new Result("memory", total >= s.memoryBytes, gib(total) + " total (profile" + (s.scaledDown
            ? ", scaled down" : "") + ": at least " + gib(s.memoryBytes) + ")", "run on a " + want.model + " with "
            + want.memoryGiB + " GiB, or fit the profile's memory to this machine: check/setup --scale-down"));
        long avail = m.meminfo("MemAvailable");
        r.add(new Result("free memory", avail >= s.availableBytes, gib(avail) + " available (needed: "
            + gib(s.availableBytes) + ", the heap and " + (s.scaledDown ? "the scaled " : "") + "reserve)",
            "free memory: stop other services (systemctl stop ...), or drop caches: sync; echo 3 > "
            + "/proc/sys/vm/drop_caches"));
        long pages = m.hugepages2m();
        r.add(new Result("hugepages", pages >= s.hugepages, (pages < 0 ? "no 2 MiB hugepages in this kernel" : pages
            + " x 2 MiB reserved") + " (needed: " + s.hugepages + ")", "echo " + s.hugepages
            + " > /proc/sys/vm/nr_hugepages (setup --profile " + want.name + " also makes it permanent in "
            + "/etc/sysctl.d)"));
        r.add(new Result("hugetlbfs", m.hugetlbfsMounted(), m.hugetlbfsMounted() ? "mounted" : "not mounted",
            "systemctl start dev-hugepages.mount (or: mount -t hugetlbfs nodev /dev/hugepages)"));
        long memlock = m.memlockLimit();
        r.add(new Result("memlock", memlock == Long.MAX_VALUE, (memlock == Long.MAX_VALUE ? "unlimited" : memlock < 0
            ? "unknown" : memlock + " bytes") + " (needed: unlimited, RDMA registers the buffers)",
            "run as the unit does (LimitMEMLOCK=infinity), or by hand after: ulimit -l unlimited"));
        List<String> libs = m.missingRdmaCoreLibraries();
        r.add(new Result("rdma-core", libs.isEmpty(), libs.isEmpty() ? "libibverbs and librdmacm installed"
            : "missing " + String.join(", ", libs), "apt-get install rdma-core ibverbs-providers librdmacm1"));
        List<String> modules = new ArrayList<>(want.kernelModules);
        if (simulate) {
            modules.removeIf(x -> x.startsWith(want.rdmaDriver));
            modules.add("rdma_rxe");
        }
        List<String> missing = modules.stream().filter(x -> !m.moduleLoaded(x)).toList();
        r.add(new Result("kernel modules", missing.isEmpty(), missing.isEmpty() ? String.join(" ", modules)
            + " loaded" : "not loaded: " + String.join(" ", missing), "modprobe -a " + String.join(" ", missing)));
        boolean nodes = m.exists("/dev/infiniband/rdma_cm");
        r.add(new Result("rdma_cm device", nodes, nodes ? "/dev/infiniband/rdma_cm" : "no /dev/infiniband/rdma_cm",
            "modprobe rdma_ucm (udev then makes /dev/infiniband/rdma_cm)"));
        devices(r, p, m, simulate);
        return r;
    }

    private static void devices(List<Result> r, Profile p, MachineFacts m, boolean simulate) {
        Profile.Machine want = p.machine;
        List<MachineFacts.RdmaDevice> all = m.rdmaDevices();
        List<MachineFacts.RdmaDevice> usable = all.stream().filter(d -> d.driver().startsWith(want.rdmaDriver)
            || simulate && d.driver().equals("rxe")).toList();
        String accepted = want.rdmaDriver + (simulate ? " or rxe (--simulate)" : "");
        String seen = all.isEmpty() ? "no RDMA device" : all.stream().map(d -> d.name() + " (" + d.driver() + ")")
            .toList().toString();
        int wanted = simulate ? 1 : want.rdmaPorts;
        r.add(new Result("rdma devices", usable.size() >= wanted, seen + "; " + accepted + " wanted: " + wanted,
            simulate ? "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <uplink netdev>"
                : "the card's ports: modprobe mlx5_ib; a missing device: check the firmware (mlxconfig -d <pci> q) "
                + "and dmesg | grep mlx5 (soft-RoCE stands in only with --simulate)"));
        List<String> down = usable.stream().filter(d -> !d.anyPortActive()).map(d -> d.name() + " " + d.portStates())
            .toList();
        boolean ok = !usable.isEmpty() && down.isEmpty();
        r.add(new Result("rdma ports", ok, usable.isEmpty() ? "no " + accepted + " device to check"
            : down.isEmpty() ? "every " + accepted + " device has an ACTIVE port" : "not ACTIVE: " + down,
            "ip link set <uplink netdev> up (rdma link show lists each device's netdev and state)"));
    }

    static String gib(long bytes) {
        return bytes < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
}
