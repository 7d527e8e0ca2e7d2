package io.nvmf4j.auth;

import io.nvmf4j.os.ReadOnlyFile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Reads key files the way ssh reads private keys: an absolute path to a regular file (not a symbolic link), owned by
 * the service's user or root, that nobody else may read or write (mode 0600 or 0400). The file holds one DHHC-1 key
 * ({@link DhchapKey}) or one NVMe/TCP TLS PSK in the interchange format ({@link TlsPsk}). Error messages name the
 * file, never its content.
 *
 * <p>The file is opened once ({@link ReadOnlyFile}: O_NOFOLLOW), the checks look at the opened file's attributes and
 * the key is read from that descriptor, at most 4 KiB: a symbolic link or another file put in the path's place
 * between a check and the read changes nothing that is read.
 */
public final class KeyFiles {
    /** Far above a DHHC-1 line (at most 104 characters); refuses to read a large file that cannot be a key. */
    private static final int MAX_SIZE = 4096;
    private static final String NOT_REGULAR = "key file %s is not a regular file (symbolic links are refused)";

    private static final Set<PosixFilePermission> OTHERS = Set.of(PosixFilePermission.GROUP_READ,
        PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    /** The points of a read at which a test changes the file system (the time between a look and a use). */
    enum Stage { OPEN, READ }

    /** Runs at each {@link Stage} of a read; nothing outside tests. */
    static volatile Consumer<Stage> race = stage -> { };

    private KeyFiles() {
    }

    /** Reads and parses the key in {@code path}; IOException with a message saying what is wrong with the file. */
    public static DhchapKey read(String path) throws IOException {
        String text = readText(path);
        try {
            return DhchapKey.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IOException("key file " + path + ": " + e.getMessage());
        }
    }

    /** Reads and parses the TLS PSK in {@code path}, with the same checks of the file as {@link #read}. */
    public static TlsPsk readTlsPsk(String path) throws IOException {
        String text = readText(path);
        try {
            return TlsPsk.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IOException("key file " + path + ": " + e.getMessage());
        }
    }

    private static String readText(String path) throws IOException {
        Path f = Path.of(path);
        if (!f.isAbsolute() || !f.normalize().equals(f)) {
            throw new IOException("key file " + path + ": must be an absolute path without '.' or '..'");
        }
        race.accept(Stage.OPEN);
        try (ReadOnlyFile file = ReadOnlyFile.open(f)) {
            PosixFileAttributes a = file.attributes();
            check(path, a);
            race.accept(Stage.READ);
            byte[] text = file.read(MAX_SIZE + 1);
            if (text.length > MAX_SIZE) {
                throw new IOException("key file " + path + " is more than " + MAX_SIZE + " bytes, too large for a key");
            }
            return new String(text, StandardCharsets.US_ASCII);
        } catch (ReadOnlyFile.OpenFailed e) {
            if (e.missing()) {
                throw new IOException("key file " + path + " does not exist");
            }
            throw new IOException(e.symbolicLink() ? NOT_REGULAR.formatted(path)
                : "key file " + path + ": cannot open it: " + e.getMessage());
        }
    }

    /** The checks of the opened file's attributes: a regular file, owner-only mode, the right owner, a key's size. */
    private static void check(String path, PosixFileAttributes a) throws IOException {
        if (!a.isRegularFile()) {
            throw new IOException(NOT_REGULAR.formatted(path));
        }
        for (PosixFilePermission p : a.permissions()) {
            if (OTHERS.contains(p)) {
                throw new IOException("key file " + path + ": permissions " + mode(a.permissions())
                    + " are too open; it must be readable by its owner only (chmod 600 " + path + ")");
            }
        }
        String owner = a.owner().getName();
        if (!owner.equals(System.getProperty("user.name")) && !owner.equals("root")) {
            throw new IOException("key file " + path + " is owned by " + owner + ", neither the service's user ("
                + System.getProperty("user.name") + ") nor root");
        }
        if (a.size() > MAX_SIZE) {
            throw new IOException("key file " + path + " is " + a.size() + " bytes, too large for a key");
        }
    }

    /** Why {@code path} cannot be used as a DH-HMAC-CHAP key file, or null when it can. */
    public static String problem(String path) {
        try {
            read(path);
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** Why {@code path} cannot be used as a TLS PSK file, or null when it can. */
    public static String tlsPskProblem(String path) {
        try {
            readTlsPsk(path);
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    private static String mode(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return String.format("0%o", m);
    }
}
