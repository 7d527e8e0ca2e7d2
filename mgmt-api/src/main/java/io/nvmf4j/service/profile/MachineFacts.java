package io.nvmf4j.service.profile;

import io.nvmf4j.config.SpdkCores;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What a machine has, read from {@code /proc} and {@code /sys} under a root ({@code /} for real; a directory of
 * fake files in tests, laid out as the kernel's): architecture, CPUs, memory, hugepages, RDMA devices and ports,
 * kernel modules, the MEMLOCK limit and the rdma-core libraries. A file that cannot be read counts as absent.
 */
public final class MachineFacts {
    /** One RDMA device: its name, its driver and the states of its ports ({@code ACTIVE}, {@code DOWN}...). */
    public record RdmaDevice(String name, String driver, List<String> portStates, String netdev) {
        public boolean anyPortActive() {
            return portStates.contains("ACTIVE");
        }
    }

    public final Path root;

    public MachineFacts(Path root) {
        this.root = root;
    }

    private Path at(String path) {
        return root.resolve(path.startsWith("/") ? path.substring(1) : path);
    }

    private String read(String path) {
        try {
            return Files.readString(at(path)).strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private List<String> lines(String path) {
        String s = read(path);
        return s == null ? List.of() : List.of(s.split("\n"));
    }

    /** Whether the root is the real one: the machine this process runs on, not an image or a test tree. */
    public boolean isThisMachine() {
        return root.toAbsolutePath().normalize().equals(Path.of("/"));
    }

    /** {@code uname -m}: /proc/sys/kernel/arch (Linux 6.1 on), else this JVM's view when the root is the real one. */
    public String arch() {
        String a = read("/proc/sys/kernel/arch");
        if (a != null || !isThisMachine()) {
            return a;
        }
        String os = System.getProperty("os.arch");
        return "amd64".equals(os) ? "x86_64" : os;
    }

    /** The online CPUs (/sys/devices/system/cpu/online: {@code 0-3,6}); empty when unreadable. */
    public BitSet onlineCpus() {
        String s = read("/sys/devices/system/cpu/online");
        if (s == null || s.isEmpty()) {
            return new BitSet();
        }
        try {
            return SpdkCores.parse("[" + s + "]");
        } catch (IllegalArgumentException e) {
            return new BitSet();
        }
    }

    /** The distinct {@code CPU part} values of /proc/cpuinfo (Arm's MIDR part numbers: 0xd41 for Cortex-A78). */
    public Set<String> cpuParts() {
        Set<String> parts = new LinkedHashSet<>();
        for (String l : lines("/proc/cpuinfo")) {
            if (l.startsWith("CPU part")) {
                parts.add(l.substring(l.indexOf(':') + 1).strip().toLowerCase());
            }
        }
        return parts;
    }

    /** A /proc/meminfo value in bytes ({@code MemTotal}, {@code MemAvailable}), -1 when absent. */
    public long meminfo(String key) {
        for (String l : lines("/proc/meminfo")) {
            if (l.startsWith(key + ":")) {
                String[] f = l.substring(key.length() + 1).strip().split("\\s+");
                long v = Long.parseLong(f[0]);
                return f.length > 1 && f[1].equalsIgnoreCase("kB") ? v * 1024 : v;
            }
        }
        return -1;
    }

    /** 2 MiB hugepages reserved (nr_hugepages), -1 when the kernel has none of that size. */
    public long hugepages2m() {
        String s = read("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
        return s == null ? -1 : Long.parseLong(s);
    }

    /** Whether a hugetlbfs is mounted (/proc/mounts). */
    public boolean hugetlbfsMounted() {
        return lines("/proc/mounts").stream().anyMatch(l -> l.split("\\s+").length > 2 && l.split("\\s+")[2].equals("hugetlbfs"));
    }

    /** The soft MEMLOCK limit of this process in bytes (/proc/self/limits), {@code Long.MAX_VALUE} for unlimited. */
    public long memlockLimit() {
        for (String l : lines("/proc/self/limits")) {
            if (l.startsWith("Max locked memory")) {
                String soft = l.substring("Max locked memory".length()).strip().split("\\s+")[0];
                return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
            }
        }
        return -1;
    }

    /** The kernel modules loaded (/proc/modules) or built in with a /sys/module entry. */
    public boolean moduleLoaded(String name) {
        if (Files.isDirectory(at("/sys/module/" + name))) {
            return true;
        }
        return lines("/proc/modules").stream().anyMatch(l -> l.startsWith(name + " "));
    }

    /** Whether a file exists under the root (device nodes, libraries). */
    public boolean exists(String path) {
        return Files.exists(at(path));
    }

    /** The rdma-core libraries found (libibverbs.so.1, librdmacm.so.1) in the usual library directories. */
    public List<String> missingRdmaCoreLibraries() {
        List<String> missing = new ArrayList<>();
        for (String lib : List.of("libibverbs.so.1", "librdmacm.so.1")) {
            boolean found = false;
            for (String dir : List.of("/usr/lib/aarch64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                "/usr/lib", "/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu", "/lib64")) {
                found |= exists(dir + "/" + lib);
            }
            if (!found) {
                missing.add(lib);
            }
        }
        return missing;
    }

    /**
     * The RDMA devices of /sys/class/infiniband: driver from the {@code device/driver} link (mlx5_core for ConnectX),
     * or {@code rxe} for a soft-RoCE device (it has a {@code parent} netdev and no bus device), else {@code unknown}.
     */
    public List<RdmaDevice> rdmaDevices() {
        Path cls = at("/sys/class/infiniband");
        List<RdmaDevice> out = new ArrayList<>();
        if (!Files.isDirectory(cls)) {
            return out;
        }
        try (Stream<Path> devs = Files.list(cls)) {
            for (Path d : devs.sorted().toList()) {
                String name = d.getFileName().toString();
                String driver = "unknown";
                Path drv = d.resolve("device/driver");
                if (Files.isSymbolicLink(drv)) {
                    driver = Files.readSymbolicLink(drv).getFileName().toString();
                } else if (Files.exists(d.resolve("parent")) || name.startsWith("rxe")) {
                    driver = "rxe";
                }
                List<String> states = new ArrayList<>();
                Path ports = d.resolve("ports");
                if (Files.isDirectory(ports)) {
                    try (Stream<Path> ps = Files.list(ports)) {
                        for (Path p : ps.sorted().toList()) {
                            String s = read(root.relativize(p.resolve("state")).toString());
                            // "4: ACTIVE"
                            states.add(s == null ? "UNKNOWN" : s.substring(s.indexOf(':') + 1).strip());
                        }
                    }
                }
                String parent = read(root.relativize(d.resolve("parent")).toString());
                out.add(new RdmaDevice(name, driver, states, parent));
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
