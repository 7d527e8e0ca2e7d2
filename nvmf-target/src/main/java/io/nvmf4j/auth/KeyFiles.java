package io.nvmf4j.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * Reads key files the way ssh reads private keys: an absolute path to a regular file (not a symbolic link), owned by
 * the service's user or root, that nobody else may read or write (mode 0600 or 0400). The file holds one DHHC-1 key
 * ({@link DhchapKey}) or one NVMe/TCP TLS PSK in the interchange format ({@link TlsPsk}). Error messages name the
 * file, never its content.
 */
public final class KeyFiles {
    /** Far above a DHHC-1 line (at most 104 characters); refuses to read a large file that cannot be a key. */
    private static final long MAX_SIZE = 4096;
    private static final Set<PosixFilePermission> OTHERS = Set.of(PosixFilePermission.GROUP_READ,
        PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

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
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(f, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new IOException("key file " + path + " does not exist");
        }
        if (a.isSymbolicLink() || !a.isRegularFile()) {
            throw new IOException("key file " + path + " is not a regular file (symbolic links are refused)");
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
        return Files.readString(f, StandardCharsets.US_ASCII);
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
