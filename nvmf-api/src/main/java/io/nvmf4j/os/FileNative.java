package io.nvmf4j.os;

import io.nvmf4j.rdma.NativeLibraryLoader;

import java.nio.ByteBuffer;

/**
 * The JNI entry points of {@code libnvmf4j_bdev} ({@code src/main/c/nvmf4j_bdev.c}), registered by its
 * {@code JNI_OnLoad}, and loaded by the native module's {@link NativeLibraryLoader} (java.library.path, then
 * {@code META-INF/native/libnvmf4j_bdev_<arch>.so} from the jar).
 *
 * <p>The operating system's file calls under both the block devices ({@code io.nvmf4j.bdev}) and the key files
 * ({@code io.nvmf4j.auth}): this package stands below both, so neither reaches up to the other.
 *
 * <p>Calls take a file descriptor this class opened and native addresses; they return a count (or 0) or a
 * negative errno, and none of the data-path calls throws or allocates.
 */
public final class FileNative {
    /** Must equal {@code NVMF4J_BDEV_ABI_VERSION} in {@code nvmf4j_bdev.c}; JNI_OnLoad checks it. */
    public static final int ABI_VERSION = 7;
    public static final String NAME = "nvmf4j_bdev";

    public static final int OPEN_CREATE = 1;
    public static final int OPEN_DIRECT = 2;
    /** Read-only and non-blocking (a FIFO in a file's place cannot hold the open); no other bit with it. */
    public static final int OPEN_READ_ONLY = 4;

    public static final int TYPE_OTHER = 0;
    public static final int TYPE_REGULAR = 1;
    public static final int TYPE_BLOCK = 2;

    /** Null when the library loaded, else why not (one line). */
    private static final String FAILURE = loadLibrary();
    private static final int[] ERRNOS = FAILURE == null ? errnos() : new int[8];
    public static final int EOPNOTSUPP = ERRNOS[0];
    public static final int EINVAL = ERRNOS[1];
    public static final int EIO = ERRNOS[2];
    public static final int ENOSPC = ERRNOS[3];
    public static final int ENOTTY = ERRNOS[4];
    /** What {@link #openBeneath} answers when a symbolic link (ELOOP) or a ".." (EXDEV) is on the path. */
    public static final int ELOOP = ERRNOS[5];
    public static final int EXDEV = ERRNOS[6];
    public static final int ENOENT = ERRNOS[7];

    private FileNative() {
    }

    private static String loadLibrary() {
        return NativeLibraryLoader.loadOrExplain(NAME, FileNative.class, FileNative::abiVersion, ABI_VERSION);
    }


    /** Whether a negative errno means "this file system or device cannot do that" (fall back). */
    public static boolean unsupported(int rc) {
        return rc == -EOPNOTSUPP || rc == -ENOTTY;
    }

    public static native int abiVersion();
    public static native int[] errnos();
    public static native String strerror(int errno);
    /** open(2) of an absolute path, read-write (read-only with OPEN_READ_ONLY), close-on-exec, always O_NOFOLLOW. */
    public static native int open(String path, int flags);
    /**
     * Opens {@code relative} below the directory {@code dir} with no symbolic link anywhere below {@code dir}
     * (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk of O_NOFOLLOW opens without openat2).
     */
    public static native int openBeneath(String dir, String relative, int flags);
    public static native int close(int fd);
    public static native int fileType(int fd);
    public static native long size(int fd);
    public static native long allocatedBytes(int fd);
    public static native int setSize(int fd, long size);
    public static native int pread(int fd, long address, int length, long offset);
    /** Up to {@code length} bytes at {@code offset}, fewer at the end of the file: the count, or a negative errno. */
    public static native int preadUpTo(int fd, long address, int length, long offset);
    public static native int pwrite(int fd, long address, int length, long offset, boolean dsync);
    public static native int fdatasync(int fd);
    public static native int punchHole(int fd, long offset, long length);
    public static native int zeroRange(int fd, long offset, long length);
    /** fallocate(mode 0): allocates the range (a thick volume); ENOSPC when the file system has no room. */
    public static native int preallocate(int fd, long offset, long length);
    /**
     * ioctl(FICLONE): {@code dst} (empty, open for writing) becomes a copy of all of {@code src} that shares its
     * blocks; EOPNOTSUPP or EINVAL where the file system cannot reflink, EXDEV across file systems.
     */
    public static native int cloneFile(int src, int dst);
    /**
     * statvfs(2) of {@code path} into {@code out}: bytes in the file system, bytes available (f_bavail), bytes free
     * (f_bfree); 0 or a negative errno.
     */
    public static native int statFs(String path, long[] out);
    public static native int blkDiscard(int fd, long offset, long length);
    public static native int blkZeroout(int fd, long offset, long length);
    public static native long bufferAddress(ByteBuffer buffer);
    /**
     * An anonymous mapping of {@code length} bytes at a 2 MiB-aligned address, with transparent huge pages
     * asked for ({@code MADV_HUGEPAGE}) when {@code hugePages}; the address or a negative errno. Its pages read
     * zero and are allocated as they are first touched.
     */
    public static native long mapAnonymous(long length, boolean hugePages);
    /** Unmaps what {@link #mapAnonymous} returned ({@code length} as given to it); 0 or a negative errno. */
    public static native int unmap(long address, long length);

    /**
     * Copies {@code length} bytes from native address {@code src} to {@code dst} with libc's {@code memcpy}; the
     * caller has checked both ranges (nothing is checked here) and that they do not overlap.
     */
    public static native void copy(long dst, long src, int length);

    /** Why the library did not load, null when it did. */
    public static String failure() {
        return FAILURE;
    }

    // ---------------------------------------------------------------- io_uring (nvmf4j_uring.c, the file device's io_uring ring)

    /**
     * An io_uring ring of {@code entries} submission entries, mapped, with every operation the file device submits
     * known to the kernel: its handle, or a negative errno (ENOSYS: no io_uring; EPERM: turned off or refused by
     * seccomp; EOPNOTSUPP: an operation is missing).
     */
    public static native long uringSetup(int entries);
    public static native int uringFd(long ring);
    /** A direct buffer over one of the ring's mappings: 0 the submission ring, 1 the completion ring, 2 the entries. */
    public static native java.nio.ByteBuffer uringRegion(long ring, int which);
    /** The ring's geometry and the ABI's offsets and constants, in {@code io.nvmf4j.bdev.FileRing}'s order. */
    public static native int[] uringLayout(long ring);
    /** io_uring_enter(toSubmit) without waiting: entries taken, or a negative errno. */
    public static native int uringEnter(int fd, int toSubmit);
    public static native void uringClose(long ring);

    /** Whether the library loaded (else {@link #failure} says why). */
    public static boolean loaded() {
        return FAILURE == null;
    }
}
