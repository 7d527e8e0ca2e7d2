package io.nvmf4j.service.profile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A /proc and /sys tree in a directory, laid out as the kernel's, for {@link MachineFacts}. */
final class FakeMachine {
    final Path root;

    FakeMachine(Path root) {
        this.root = root;
    }

    FakeMachine file(String path, String content) {
        try {
            Path f = root.resolve(path.substring(1));
            Files.createDirectories(f.getParent());
            Files.writeString(f, content);
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    FakeMachine dir(String path) {
        try {
            Files.createDirectories(root.resolve(path.substring(1)));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An aarch64 machine with {@code cpus} cores of {@code part}, {@code memGiB}, nothing RDMA yet. */
    static FakeMachine arm(Path root, int cpus, String part, int memGiB, int availGiB, long hugepages) {
        FakeMachine m = new FakeMachine(root);
        StringBuilder cpuinfo = new StringBuilder();
        for (int i = 0; i < cpus; i++) {
            cpuinfo.append("processor\t: ").append(i).append("\nCPU implementer\t: 0x41\nCPU part\t: ").append(part)
                .append("\n\n");
        }
        return m.file("/proc/sys/kernel/arch", "aarch64\n")
            .file("/sys/devices/system/cpu/online", "0-" + (cpus - 1) + "\n")
            .file("/proc/cpuinfo", cpuinfo.toString())
            .file("/proc/meminfo", "MemTotal:       " + ((long) memGiB << 20) + " kB\nMemFree:  1 kB\n"
                + "MemAvailable:   " + ((long) availGiB << 20) + " kB\n")
            .file("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", hugepages + "\n")
            .file("/proc/mounts", "proc /proc proc rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n")
            .file("/proc/self/limits", "Limit                     Soft Limit           Hard Limit           Units\n"
                + "Max locked memory         unlimited            unlimited            bytes\n")
            .file("/usr/lib/aarch64-linux-gnu/libibverbs.so.1", "")
            .file("/usr/lib/aarch64-linux-gnu/librdmacm.so.1", "")
            .file("/dev/infiniband/rdma_cm", "");
    }

    FakeMachine modules(String... names) {
        StringBuilder sb = new StringBuilder();
        for (String n : names) {
            sb.append(n).append(" 16384 0 - Live 0x0000000000000000\n");
        }
        return file("/proc/modules", sb.toString());
    }

    /** A ConnectX port: mlx5_N with its PCI device's driver link and port 1 in {@code state}. */
    FakeMachine mlx5(String name, String state) {
        try {
            dir("/sys/bus/pci/drivers/mlx5_core");
            Path dev = root.resolve("sys/devices/pci0000:00/0000:03:00.0");
            Files.createDirectories(dev);
            Path link = dev.resolve("driver");
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(link, Path.of("../../../bus/pci/drivers/mlx5_core"));
            }
            Path ib = root.resolve("sys/class/infiniband/" + name);
            Files.createDirectories(ib);
            Files.createSymbolicLink(ib.resolve("device"), root.resolve("sys/devices/pci0000:00/0000:03:00.0"));
            return file("/sys/class/infiniband/" + name + "/ports/1/state", state + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A soft-RoCE device on {@code netdev}. */
    FakeMachine rxe(String name, String netdev, String state) {
        return file("/sys/class/infiniband/" + name + "/parent", netdev + "\n")
            .file("/sys/class/infiniband/" + name + "/ports/1/state", state + "\n");
    }
}
