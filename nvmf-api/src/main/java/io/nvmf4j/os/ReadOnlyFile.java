package io.nvmf4j.os;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;

/**
 * A small file read through the one descriptor that was checked, as SPDK's keyring file module reads a key: opened
 * read-only with O_NOFOLLOW (a symbolic link as the last component fails the open) and O_NONBLOCK (a FIFO put in the
 * file's place cannot hold the open), its attributes taken from that descriptor ({@code /proc/self/fd/N}, which
 * stat follows to the open file itself, as fstat would) and its bytes read from it with pread. Whatever the path
 * names after the open, the attributes and the bytes are the opened file's.
 */
public final class ReadOnlyFile implements AutoCloseable {
    private final int fd;

    /** Why an open failed: {@link #symbolicLink()} and {@link #missing()} tell the usual cases apart. */
    public static final class OpenFailed extends IOException {
        private final int errno;

        OpenFailed(int errno) {
            super(FileNative.strerror(errno));
            this.errno = errno;
        }

        /** The path's last component is a symbolic link (O_NOFOLLOW's ELOOP). */
        public boolean symbolicLink() {
            return errno == FileNative.ELOOP;
        }

        public boolean missing() {
            return errno == FileNative.ENOENT;
        }
    }

    private ReadOnlyFile(int fd) {
        this.fd = fd;
    }

    /**
     * Opens {@code path} (absolute) read-only without following a final symbolic link; {@link OpenFailed} when the
     * open fails, IOException when the native library is not loaded (its reason).
     */
    public static ReadOnlyFile open(Path path) throws IOException {
        if (!FileNative.loaded()) {
            throw new IOException("cannot open " + path + " through a checked descriptor: " + FileNative.failure());
        }
        int rc = FileNative.open(path.toString(), FileNative.OPEN_READ_ONLY);
        if (rc < 0) {
            throw new OpenFailed(-rc);
        }
        return new ReadOnlyFile(rc);
    }

    /** The open file's attributes (fstat through {@code /proc/self/fd/N}). */
    public PosixFileAttributes attributes() throws IOException {
        return Files.readAttributes(Path.of("/proc/self/fd/" + fd), PosixFileAttributes.class);
    }

    /** Up to {@code max} bytes from offset 0 of the open file (fewer at its end). */
    public byte[] read(int max) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(max);
        int n = FileNative.preadUpTo(fd, FileNative.bufferAddress(b), max, 0);
        if (n < 0) {
            throw new IOException(FileNative.strerror(n));
        }
        byte[] out = new byte[n];
        b.get(0, out);
        return out;
    }

    @Override
    public void close() {
        FileNative.close(fd);
    }
}
