package io.nvmf4j.storage;

import io.nvmf4j.os.FileNative;

import io.nvmf4j.config.StorageConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A file bdev's file, opened the only ways {@link StorageConfig} allows, with the decision taken on the opened
 * descriptor and not on a path that could change between a check and the open:
 *
 * <ul>
 *   <li>a path listed in {@link StorageConfig#blockDevices} (exact text) is resolved once (a udev link such as
 *       {@code /dev/disk/by-id/...} is followed), the result opened with O_NOFOLLOW, and the descriptor must be a
 *       block device;</li>
 *   <li>any other path must lie under one of {@link StorageConfig#fileDirectories}; it is opened below that
 *       directory with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) (without openat2: each directory component
 *       opened with O_NOFOLLOW | O_DIRECTORY), so a symbolic link swapped in anywhere below the directory fails the
 *       open, and the descriptor must be a regular file (a block device reached this way is refused).</li>
 * </ul>
 *
 * Both engines open through here: the java engine keeps the descriptor, the spdk engine hands it to SPDK's aio
 * bdev, which opens {@code /proc/self/fd/N} (it reopens this very file whatever the path names meanwhile).
 */
public final class StorageFile implements AutoCloseable {
    private final Path path;
    private final boolean blockDevice;
    private final boolean created;
    private int fd;

    private StorageFile(Path path, int fd, boolean blockDevice, boolean created) {
        this.path = path;
        this.fd = fd;
        this.blockDevice = blockDevice;
        this.created = created;
    }

    /**
     * Opens {@code path} for bdev {@code bdev} read-write as {@code storage} allows, creating a regular file of mode
     * 0600 when {@code create} (in a directory that must exist). Throws {@link BdevException} naming the bdev, the
     * path and the reason otherwise.
     */
    public static StorageFile open(String bdev, Path path, StorageConfig storage, boolean create, boolean directIo) {
        BdevException.requireFileNative("file bdev " + bdev);
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            throw refused(bdev, path, "must be an absolute path without '.' or '..'");
        }
        int direct = directIo ? FileNative.OPEN_DIRECT : 0;
        if (storage != null && storage.blockDevices != null && storage.blockDevices.contains(path.toString())) {
            Path real;
            try {
                real = path.toRealPath();
            } catch (IOException e) {
                throw refused(bdev, path, "listed in storage.blockDevices but cannot be resolved: " + e);
            }
            int fd = opened(bdev, path, FileNative.open(real.toString(), direct), directIo);
            return checked(bdev, path, fd, FileNative.TYPE_BLOCK, false,
                "is listed in storage.blockDevices but " + real + " is not a block device");
        }
        Path dir = allowedDirectory(path, storage);
        if (dir == null) {
            throw refused(bdev, path, "is outside storage.fileDirectories "
                + (storage == null ? "[]" : storage.fileDirectories) + " and not listed in storage.blockDevices");
        }
        boolean existed = Files.exists(path, LinkOption.NOFOLLOW_LINKS);
        // the message only: a link on the way still fails the open below
        if (!existed && !Files.isDirectory(path.getParent())) {
            throw new BdevException("file bdev " + bdev + ": directory " + path.getParent()
                + " does not exist; nvmf4j creates no directories, make it first");
        }
        int rc = FileNative.openBeneath(dir.toString(), dir.relativize(path).toString(),
            direct | (create ? FileNative.OPEN_CREATE : 0));
        if (rc == -FileNative.ELOOP || rc == -FileNative.EXDEV) {
            throw refused(bdev, path, "passes through a symbolic link below " + dir
                + " (a file image is never reached through one)");
        }
        int fd = opened(bdev, path, rc, directIo);
        return checked(bdev, path, fd, FileNative.TYPE_REGULAR, !existed,
            "is not a regular file (a block device must be listed in storage.blockDevices)");
    }

    /**
     * The deepest allowed directory {@code f} lies strictly under, or null (the deepest, so that an allowed
     * directory inside another, reached through a link the operator made, is opened as named).
     */
    private static Path allowedDirectory(Path f, StorageConfig s) {
        if (s == null || s.fileDirectories == null) {
            return null;
        }
        Path best = null;
        for (String d : s.fileDirectories) {
            Path dir = d == null ? null : Path.of(d);
            if (dir != null && dir.isAbsolute() && f.startsWith(dir) && !f.equals(dir)
                && (best == null || dir.getNameCount() > best.getNameCount())) {
                best = dir;
            }
        }
        return best;
    }

    private static int opened(String bdev, Path path, int rc, boolean directIo) {
        if (rc < 0) {
            throw new BdevException("file bdev " + bdev + ": cannot open " + path + ": " + FileNative.strerror(rc)
                + (directIo && rc == -FileNative.EINVAL ? " (the file system refuses O_DIRECT)" : ""));
        }
        return rc;
    }

    /** Keeps {@code fd} if fstat of it says {@code type}, else closes it and refuses with {@code otherwise}. */
    private static StorageFile checked(String bdev, Path path, int fd, int type, boolean created, String otherwise) {
        int t = FileNative.fileType(fd);
        if (t != type) {
            FileNative.close(fd);
            throw refused(bdev, path, t < 0 ? "fstat failed: " + FileNative.strerror(t) : otherwise);
        }
        return new StorageFile(path, fd, type == FileNative.TYPE_BLOCK, created);
    }

    private static BdevException refused(String bdev, Path path, String why) {
        return new BdevException("file bdev " + bdev + ": " + path + " " + why);
    }

    public Path path() {
        return path;
    }

    /** Whether the descriptor is a block device (else a regular file). */
    public boolean blockDevice() {
        return blockDevice;
    }

    /** Whether this open created the file. */
    public boolean created() {
        return created;
    }

    /** The descriptor; -1 once closed or released. */
    public int fd() {
        return fd;
    }

    /** {@code /proc/self/fd/N}: opening it reopens this very file, whatever its path names meanwhile. */
    public String procPath() {
        if (fd < 0) {
            throw new IllegalStateException("closed");
        }
        return "/proc/self/fd/" + fd;
    }

    /** Size in bytes (st_size, or BLKGETSIZE64 of a block device). */
    public long size() {
        long rc = FileNative.size(fd);
        if (rc < 0) {
            throw new BdevException(path + ": size failed: " + FileNative.strerror((int) rc));
        }
        return rc;
    }

    /** Grows a regular file to {@code bytes} (sparse); no-op when it is already that long. */
    public void extendTo(long bytes) {
        if (!blockDevice && size() < bytes) {
            int rc = FileNative.setSize(fd, bytes);
            if (rc < 0) {
                throw new BdevException(path + ": extend failed: " + FileNative.strerror(rc));
            }
        }
    }

    /** Hands the descriptor to the caller, who closes it from now on. */
    public int release() {
        int f = fd;
        fd = -1;
        return f;
    }

    @Override
    public void close() {
        if (fd >= 0) {
            FileNative.close(fd);
            fd = -1;
        }
    }
}
