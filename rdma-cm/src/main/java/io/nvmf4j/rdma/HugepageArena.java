package io.nvmf4j.rdma;

import io.nvmf4j.kernel.Sysctl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * One anonymous mapping to carve registered buffers from: {@code mmap(MAP_HUGETLB)} when asked
 * and the system has free hugepages, otherwise normal pages (logged once per arena with the
 * reason). Pages are populated at creation, so a shortage shows here rather than as a SIGBUS
 * later. Up to 2 GiB - 1 per arena (one direct buffer); use several for more.
 *
 * <p>{@link #close()} unmaps; deregister every MR over the arena first, and drop the buffer.
 */
public final class HugepageArena implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HugepageArena.class.getName());
    private static final int INFO_ADDRESS = 0;
    private static final int INFO_LENGTH = 1;
    private static final int INFO_HUGE = 2;
    private static final int INFO_HUGE_ERRNO = 3;

    private final ByteBuffer buffer;
    private final long address;
    private final long mappedLength;
    private final boolean hugepages;
    private final String fallbackReason;
    private boolean closed;

    private HugepageArena(ByteBuffer buffer, long[] info, String fallbackReason) {
        this.buffer = buffer.order(ByteOrder.nativeOrder());
        this.address = info[INFO_ADDRESS];
        this.mappedLength = info[INFO_LENGTH];
        this.hugepages = info[INFO_HUGE] != 0;
        this.fallbackReason = fallbackReason;
    }

    /**
     * Maps {@code size} bytes, hugepage-backed if {@code preferHugepages} and possible.
     *
     * @throws OutOfMemoryError when even normal pages cannot be mapped
     */
    public static HugepageArena allocate(long size, boolean preferHugepages) {
        Rdma.ensureLibraryLoaded();
        if (size <= 0 || size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("arena size " + size + " not in 1.." + Integer.MAX_VALUE);
        }
        long hugePageSize = preferHugepages ? defaultHugePageSize() : 0;
        long[] info = new long[4];
        ByteBuffer buffer = Native.mmapArena(size, hugePageSize, preferHugepages, info);
        if (buffer == null) {
            throw new OutOfMemoryError("mmap of " + size + " bytes failed: " + Native.strerror((int) info[0]));
        }
        String reason = null;
        if (preferHugepages && info[INFO_HUGE] == 0) {
            reason = hugePageSize == 0 ? "no hugepage size in /proc/meminfo"
                    : "mmap(MAP_HUGETLB) of " + roundUp(size, hugePageSize) + " bytes failed: "
                    + Native.strerror((int) info[INFO_HUGE_ERRNO]) + " (vm.nr_hugepages=" + nrHugepages() + ")";
            LOG.log(System.Logger.Level.WARNING, "hugepage arena of {0} bytes falls back to normal pages: {1}",
                    Long.toString(size), reason);
        }
        return new HugepageArena(buffer, info, reason);
    }

    private static long roundUp(long size, long unit) {
        return (size + unit - 1) / unit * unit;
    }

    /** The default hugepage size from /proc/meminfo ({@code Hugepagesize:}), or 0 if none. */
    public static long defaultHugePageSize() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/meminfo"))) {
                if (line.startsWith("Hugepagesize:")) {
                    String[] parts = line.substring(13).trim().split("\\s+");
                    return Long.parseLong(parts[0]) * (parts.length > 1 && parts[1].equals("kB") ? 1024 : 1);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "cannot read /proc/meminfo", e);
        }
        return 0;
    }

    /** {@code /proc/sys/vm/nr_hugepages}, or -1 when unreadable. */
    public static long nrHugepages() {
        Path p = Paths.get("/proc/sys/vm/nr_hugepages");
        try {
            return Sysctl.readLong(p);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The whole arena, native byte order. */
    public ByteBuffer buffer() {
        return buffer;
    }

    public long address() {
        return address;
    }

    /** Usable size (as asked). */
    public int size() {
        return buffer.capacity();
    }

    /** Mapped size: rounded up to the page or hugepage size. */
    public long mappedLength() {
        return mappedLength;
    }

    /** True when hugepages back the arena. */
    public boolean isHugepageBacked() {
        return hugepages;
    }

    /** Why hugepages were asked for and not used; null otherwise. */
    public String fallbackReason() {
        return fallbackReason;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Native.munmapArena(address, mappedLength);
        }
    }
}
