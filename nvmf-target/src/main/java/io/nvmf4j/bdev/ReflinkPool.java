package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;
import io.nvmf4j.storage.BdevException;

import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.VolumeConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The java engine's pool ({@link PoolConfig#KIND_REFLINK_DIR}): a directory on a file system that reflinks (XFS
 * with {@code reflink=1}, btrfs). A volume is a file {@code <volume>.vol} (sparse when thin, fallocate'd when
 * thick); a snapshot is {@code <volume>@<snapshot>.snap}, a read-only (0400) FICLONE of the volume's file; a clone is
 * a FICLONE of a snapshot into a new volume's file. FICLONE shares the blocks, so both are instant and take no space
 * until written; each is an independent file afterwards (the lineage lives in the document).
 *
 * <p>Only the names above, {@value #TRASH_PREFIX} files (a deleted volume or snapshot, removed by
 * {@link #emptyTrash}) and {@value #PROBE_PREFIX} files (the reflink probe) are the pool's; {@link #reconcile}
 * removes those the document does not name and leaves anything else alone (logged).
 *
 * <p>Control-plane threads only, serialised by the engine; every file is reached below the pool's directory without
 * symbolic links ({@link FileNative#openBeneath}).
 */
public final class ReflinkPool implements VolumeStore {
    private static final Logger LOG = LoggerFactory.getLogger(ReflinkPool.class);
    static final String VOLUME_SUFFIX = ".vol";
    static final String SNAPSHOT_SUFFIX = ".snap";
    static final String TRASH_PREFIX = ".trash.";
    static final String PROBE_PREFIX = ".probe.";

    /** Size, used and free bytes of the pool's file system (statvfs; free as an unprivileged writer sees it). */
    public record Capacity(long size, long used, long free) {
        /** Used bytes in percent of size (0 for an empty file system). */
        public double usedPercent() {
            return size == 0 ? 0 : 100.0 * used / size;
        }
    }

    /** What {@link #reconcile} found: files removed (not in the document) and volume files set back to its size. */
    public record Reconciled(List<String> removed, List<String> resized, List<String> missing) {
    }

    private final String name;
    private final Path dir;
    private volatile int warnPercent;
    private boolean aboveWatermark;
    private final AtomicLong watermarkCrossings = new AtomicLong();

    private ReflinkPool(String name, Path dir, int warnPercent) {
        this.name = name;
        this.dir = dir;
        this.warnPercent = warnPercent;
    }

    /**
     * Opens pool {@code name} in directory {@code dir} (the validator checked it lies under
     * {@code storage.fileDirectories}): refused with the reason when the library is missing or the file system cannot
     * reflink, probed with a real FICLONE of a small file.
     */
    public static ReflinkPool open(String name, Path dir, int warnPercent) {
        BdevException.requireFileNative("file bdev pool " + name);
        ReflinkPool p = new ReflinkPool(name, dir.toAbsolutePath().normalize(), warnPercent);
        p.probe();
        return p;
    }

    public String name() {
        return name;
    }

    public Path directory() {
        return dir;
    }

    public void warnPercent(int percent) {
        this.warnPercent = percent;
    }

    /** Times the pool's use rose above its warning watermark (each crossing counted once). */
    public long watermarkCrossings() {
        return watermarkCrossings.get();
    }

    /** Writes 4 KiB into a probe file and FICLONEs it: the file system's own answer on whether it reflinks. */
    private void probe() {
        String token = Long.toHexString(ThreadLocalRandom.current().nextLong());
        String a = PROBE_PREFIX + token + ".a";
        String b = PROBE_PREFIX + token + ".b";
        int src = openNew(a);
        try {
            int rc = FileNative.preallocate(src, 0, 4096);
            if (rc < 0 && !FileNative.unsupported(rc)) {
                throw refused("cannot write a probe file in " + dir + ": " + FileNative.strerror(rc));
            }
            int dst = openNew(b);
            try {
                rc = FileNative.cloneFile(src, dst);
                if (rc < 0) {
                    throw refused(dir + " is on a file system that cannot reflink (FICLONE: " + FileNative.strerror(rc)
                        + "); a reflink-dir pool needs XFS made with reflink=1, or btrfs");
                }
            } finally {
                FileNative.close(dst);
            }
        } finally {
            FileNative.close(src);
            deleteQuietly(a);
            deleteQuietly(b);
        }
    }

    private BdevException refused(String why) {
        return new BdevException("pool " + name + ": " + why);
    }

    /** The pool's file system now; checks the warning watermark (logged once per crossing, counted). */
    public Capacity capacity() {
        long[] v = new long[3];
        int rc = FileNative.statFs(dir.toString(), v);
        if (rc < 0) {
            throw refused("statvfs of " + dir + ": " + FileNative.strerror(rc));
        }
        Capacity c = new Capacity(v[0], v[0] - v[2], v[1]);
        checkWatermark(c);
        return c;
    }

    private synchronized void checkWatermark(Capacity c) {
        boolean above = c.usedPercent() >= warnPercent;
        if (above && !aboveWatermark) {
            watermarkCrossings.incrementAndGet();
            LOG.warn("pool {}: {}% of {} bytes in use, above its warning watermark of {}% ({} bytes free)", name,
                String.format("%.1f", c.usedPercent()), c.size(), warnPercent, c.free());
        } else if (!above && aboveWatermark) {
            LOG.info("pool {}: {}% in use, below its warning watermark of {}% again", name,
                String.format("%.1f", c.usedPercent()), warnPercent);
        }
        aboveWatermark = above;
    }

    // ------------------------------------------------------------------ files

    static String volumeFile(String volume) {
        return volume + VOLUME_SUFFIX;
    }

    static String snapshotFile(String volume, String snapshot) {
        return volume + "@" + snapshot + SNAPSHOT_SUFFIX;
    }

    /** The path of volume {@code volume}'s file. */
    public Path volumePath(String volume) {
        return dir.resolve(volumeFile(volume));
    }

    /** The path of snapshot {@code snapshot} of {@code volume}. */
    public Path snapshotPath(String volume, String snapshot) {
        return dir.resolve(snapshotFile(volume, snapshot));
    }

    /**
     * Creates volume {@code v}'s file: sparse ({@code thick} false) or with every block allocated. Conflict-free by
     * the caller's checks; a file already there is an error. Nothing is left behind on failure.
     */
    public void createVolume(VolumeConfig v) {
        String file = volumeFile(v.name);
        long bytes = v.numBlocks * v.blockSize;
        if (v.thick && bytes > capacity().free()) {
            throw refused("no room for a thick volume of " + bytes + " bytes (" + capacity().free() + " free)");
        }
        int fd = openNew(file);
        boolean done = false;
        try {
            check(file, "set its size", FileNative.setSize(fd, bytes));
            if (v.thick) {
                check(file, "allocate its " + bytes + " bytes", FileNative.preallocate(fd, 0, bytes));
            }
            check(file, "fdatasync", FileNative.fdatasync(fd));
            syncDirectory();
            done = true;
        } finally {
            FileNative.close(fd);
            if (!done) {
                deleteQuietly(file);
            }
        }
    }

    /**
     * Opens volume {@code v}'s file as file bdev {@code bdevName} (thin unless thick), below this directory only.
     */
    @Override
    public FileBdev openVolume(String bdevName, VolumeConfig v) {
        FileBdev d = FileBdev.open(bdevName, volumePath(v.name), v.blockSize, v.numBlocks, false,
            io.nvmf4j.config.BdevConfig.DEFAULT_IO_WORKERS, io.nvmf4j.config.BdevConfig.DEFAULT_IO_QUEUE_DEPTH,
            StorageConfig.directories(dir.toString()));
        d.thinProvisioned(!v.thick);
        return d;
    }

    /** Sets the size of a volume's file no bdev has open (a shrink, or a grow of a volume nobody opened). */
    @Override
    public void setVolumeSize(String volume, long bytes) {
        String file = volumeFile(volume);
        int fd = openExisting(file);
        try {
            check(file, "set its size to " + bytes, FileNative.setSize(fd, bytes));
            check(file, "fdatasync", FileNative.fdatasync(fd));
        } finally {
            FileNative.close(fd);
        }
    }

    /**
     * Snapshot {@code snapshot} of the volume open as {@code volume} (its writes held and drained, its data synced by
     * the caller): a FICLONE of the volume's file, made read-only.
     */
    public void snapshot(FileBdev volume, String volumeName, String snapshot) {
        cloneInto(volume.fd(), snapshotFile(volumeName, snapshot), true);
    }

    /** Snapshot of a volume no bdev has open: the same FICLONE, from its file. */
    public void snapshotClosed(String volumeName, String snapshot) {
        int src = openExisting(volumeFile(volumeName));
        try {
            cloneInto(src, snapshotFile(volumeName, snapshot), true);
        } finally {
            FileNative.close(src);
        }
    }

    /** Clone: new volume {@code clone}'s file as a FICLONE of snapshot {@code snapshot} of {@code volume}. */
    public void cloneSnapshot(String volume, String snapshot, String clone) {
        int src = openReadOnly(snapshotFile(volume, snapshot));
        try {
            cloneInto(src, volumeFile(clone), false);
        } finally {
            FileNative.close(src);
        }
    }

    private void cloneInto(int src, String file, boolean readOnly) {
        int dst = openNew(file);
        boolean done = false;
        try {
            check(file, "FICLONE", FileNative.cloneFile(src, dst));
            check(file, "fdatasync", FileNative.fdatasync(dst));
            if (readOnly) {
                Files.setPosixFilePermissions(dir.resolve(file), PosixFilePermissions.fromString("r--------"));
            }
            syncDirectory();
            done = true;
        } catch (IOException e) {
            throw refused(file + ": " + e.getMessage());
        } finally {
            FileNative.close(dst);
            if (!done) {
                deleteQuietly(file);
            }
        }
    }

    /** Moves a volume's file to the trash (undone by {@link #restoreVolume}; gone at {@link #emptyTrash}). */
    @Override
    public void trashVolume(String volume) {
        trash(volumeFile(volume));
    }

    @Override
    public void restoreVolume(String volume) {
        restore(volumeFile(volume));
    }

    public void trashSnapshot(String volume, String snapshot) {
        trash(snapshotFile(volume, snapshot));
    }

    public void restoreSnapshot(String volume, String snapshot) {
        restore(snapshotFile(volume, snapshot));
    }

    /** Removes a volume's file now: the undo of a create or clone that was never committed. */
    @Override
    public void discardVolume(String volume) {
        discard(volumeFile(volume));
    }

    /** Removes a snapshot's file now: the undo of a snapshot that was never committed. */
    public void discardSnapshot(String volume, String snapshot) {
        discard(snapshotFile(volume, snapshot));
    }

    private void discard(String file) {
        try {
            Files.delete(dir.resolve(file));
            syncDirectory();
        } catch (IOException e) {
            throw refused("cannot remove " + file + ": " + e);
        }
    }

    private void trash(String file) {
        try {
            Files.move(dir.resolve(file), dir.resolve(TRASH_PREFIX + file), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            syncDirectory();
        } catch (IOException e) {
            throw refused("cannot delete " + file + ": " + e);
        }
    }

    private void restore(String file) {
        try {
            Files.move(dir.resolve(TRASH_PREFIX + file), dir.resolve(file), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw refused("cannot restore " + file + ": " + e);
        }
    }

    /** Removes what the trash holds (deletes the document has committed); their blocks are free again. */
    public List<String> emptyTrash() {
        List<String> removed = new ArrayList<>();
        for (String f : listing()) {
            if (f.startsWith(TRASH_PREFIX)) {
                deleteQuietly(f);
                removed.add(f);
            }
        }
        if (!removed.isEmpty()) {
            syncDirectory();
        }
        return removed;
    }

    /**
     * Makes the directory agree with the document's pool {@code pool}, at start: a file it names that is in the trash
     * comes back (a delete never committed); the pool's files that it does not name are removed (a create, snapshot
     * or clone whose change was never committed, the trash of a committed delete), a volume file of another size than
     * the document's is set to it (a resize never committed), and the files that are missing are reported (the engine
     * then follows {@link io.nvmf4j.engine.MissingVolumes}). Files not of the pool's naming are left alone (logged).
     */
    public Reconciled reconcile(PoolConfig pool) {
        Map<String, VolumeConfig> volumes = new HashMap<>();
        List<String> known = new ArrayList<>();
        for (VolumeConfig v : pool.volumes) {
            volumes.put(volumeFile(v.name), v);
            known.add(volumeFile(v.name));
            for (SnapshotConfig s : v.snapshots) {
                known.add(snapshotFile(v.name, s.name));
            }
        }
        List<String> removed = new ArrayList<>();
        List<String> resized = new ArrayList<>();
        List<String> present = listing();
        for (String f : known) {
            if (!present.contains(f) && present.contains(TRASH_PREFIX + f)) {
                LOG.warn("pool {}: restoring {}: its delete was never committed", name, f);
                restore(f);
                present = listing();
            }
        }
        for (String f : present) {
            if (!isPoolFile(f)) {
                LOG.warn("pool {}: {} in {} is not a file of the pool; left alone", name, f, dir);
            } else if (!known.contains(f)) {
                LOG.warn("pool {}: removing {}: the configuration does not name it (an operation that did not"
                    + " complete, or a deleted volume's file)", name, f);
                deleteQuietly(f);
                removed.add(f);
            } else if (volumes.containsKey(f)) {
                VolumeConfig v = volumes.get(f);
                long want = v.numBlocks * v.blockSize;
                long size = sizeOf(f);
                if (size != want) {
                    LOG.warn("pool {}: volume {} holds {} bytes, the configuration says {} (a resize that did not"
                        + " complete): set back to {}", name, v.name, size, want, want);
                    setVolumeSize(v.name, want);
                    resized.add(f);
                }
            }
        }
        List<String> missing = new ArrayList<>();
        for (String f : known) {
            if (!present.contains(f)) {
                LOG.error("pool {}: {} is missing from {}; the start goes on without it", name, f, dir);
                missing.add(f);
            }
        }
        if (!removed.isEmpty()) {
            syncDirectory();
        }
        return new Reconciled(removed, resized, missing);
    }

    /** The files in the directory of the pool's naming (a new pool's directory must have none). */
    public List<String> poolFiles() {
        List<String> out = new ArrayList<>();
        for (String f : listing()) {
            if (isPoolFile(f)) {
                out.add(f);
            }
        }
        return out;
    }

    private static boolean isPoolFile(String f) {
        return f.endsWith(VOLUME_SUFFIX) || f.endsWith(SNAPSHOT_SUFFIX) || f.startsWith(TRASH_PREFIX)
            || f.startsWith(PROBE_PREFIX);
    }

    /** Bytes a pool file occupies on the medium (st_blocks; shared reflink blocks counted in full). */
    public long allocatedBytes(String file) {
        int fd = openReadOnly(file);
        try {
            return FileNative.allocatedBytes(fd);
        } finally {
            FileNative.close(fd);
        }
    }

    private long sizeOf(String file) {
        int fd = openReadOnly(file);
        try {
            return FileNative.size(fd);
        } finally {
            FileNative.close(fd);
        }
    }

    private List<String> listing() {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                out.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            throw refused("cannot list " + dir + ": " + e);
        }
        out.sort(null);
        return out;
    }

    /** Opens a new file below the directory for writing; an existing one is an error (the pool never overwrites). */
    private int openNew(String file) {
        if (Files.exists(dir.resolve(file), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw refused(file + " exists already in " + dir);
        }
        return (int) check(file, "create", FileNative.openBeneath(dir.toString(), file, FileNative.OPEN_CREATE));
    }

    private int openExisting(String file) {
        return (int) check(file, "open", FileNative.openBeneath(dir.toString(), file, 0));
    }

    private int openReadOnly(String file) {
        return (int) check(file, "open", FileNative.openBeneath(dir.toString(), file, FileNative.OPEN_READ_ONLY));
    }

    private long check(String file, String what, long rc) {
        if (rc < 0) {
            int errno = (int) -rc;
            String why = FileNative.strerror(errno);
            throw rc == -FileNative.ENOSPC
                ? new BdevException("pool " + name + ": " + file + ": " + what + ": no space left (" + why + ")")
                : refused(file + ": " + what + " failed: " + why);
        }
        return rc;
    }

    private void deleteQuietly(String file) {
        try {
            Files.deleteIfExists(dir.resolve(file));
        } catch (NoSuchFileException e) {
            // gone already
        } catch (IOException e) {
            LOG.warn("pool {}: cannot remove {}: {}", name, file, e.toString());
        }
    }

    private void syncDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            LOG.warn("pool {}: fsync of {} failed: {}", name, dir, e.toString());
        }
    }
}
