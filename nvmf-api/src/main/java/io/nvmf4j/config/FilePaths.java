package io.nvmf4j.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

/**
 * The file-system half of {@link ConfigValidator}: whether a file bdev's path is one {@link StorageConfig}
 * allows. Read-only: nothing is created or opened.
 */
final class FilePaths {
    /** {@code S_IFMT} and {@code S_IFBLK} of stat(2)'s {@code st_mode}. */
    private static final int S_IFMT = 0170000;
    private static final int S_IFBLK = 0060000;

    private FilePaths() {
    }

    /** Checks the section itself: absolute, normalised paths; no directory that would allow everything. */
    static void validateStorage(StorageConfig s, List<String> p) {
        if (s.fileDirectories == null || s.blockDevices == null || s.cephDirectories == null) {
            p.add("storage: fileDirectories, blockDevices and cephDirectories must be lists (may be empty)");
            return;
        }
        for (int i = 0; i < s.cephDirectories.size(); i++) {
            String at = "storage.cephDirectories[" + i + "]";
            Path d = absolute(s.cephDirectories.get(i), at, p);
            if (d != null && d.getParent() == null) {
                p.add(at + ": / would let an rbd bdev read every file of the system; name Ceph's directories");
            }
        }
        for (int i = 0; i < s.fileDirectories.size(); i++) {
            String at = "storage.fileDirectories[" + i + "]";
            Path d = absolute(s.fileDirectories.get(i), at, p);
            if (d != null && d.getParent() == null) {
                p.add(at + ": / would allow every file of the system; name the directories for bdev images");
            }
        }
        for (int i = 0; i < s.blockDevices.size(); i++) {
            String at = "storage.blockDevices[" + i + "]";
            Path d = absolute(s.blockDevices.get(i), at, p);
            if (d != null && Files.exists(d) && !isBlockDevice(d, true)) {
                p.add(at + ": " + d + " is not a block device");
            }
        }
    }

    /**
     * Reports at {@code at} why a file bdev may not use {@code path}: a listed block device must be one; any other
     * path must lie under an allowed directory, in an existing directory (none is created), with no symbolic link
     * from the allowed directory down, and be a regular file if it exists.
     */
    static void validatePath(String path, StorageConfig s, String at, List<String> p) {
        Path f = absolute(path, at, p);
        if (f == null) {
            return;
        }
        if (s != null && s.blockDevices != null && s.blockDevices.contains(path)) {
            if (!isBlockDevice(f, true)) {
                p.add(at + ": " + path + " is listed in storage.blockDevices but is not a block device");
            }
            return;
        }
        Path dir = allowedDirectory(f, s);
        if (dir == null) {
            p.add(at + ": " + path + " is outside storage.fileDirectories "
                + (s == null || s.fileDirectories == null ? "[]" : s.fileDirectories)
                + "; a file bdev's image must lie in one of them (a block device must be listed in storage.blockDevices)");
            return;
        }
        Path link = linkBelow(f, dir);
        if (link != null) {
            p.add(at + ": " + link + " is a symbolic link; a file bdev's path must not pass through one below " + dir);
            return;
        }
        Path parent = f.getParent();
        if (!Files.isDirectory(parent)) {
            p.add(at + ": directory " + parent + " does not exist; nvmf4j creates no directories, make it first");
            return;
        }
        if (Files.exists(f, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
            p.add(at + ": " + path + (isBlockDevice(f, false)
                ? " is a block device; list it in storage.blockDevices to serve it"
                : " is neither a regular file nor a listed block device"));
        }
    }

    /**
     * Reports at {@code at} why a pool may not live in directory {@code path}: it must be an existing directory
     * strictly under one of {@code storage.fileDirectories}, reached with no symbolic link from that directory down.
     */
    static void validatePoolPath(String path, StorageConfig s, String at, List<String> p) {
        Path f = absolute(path, at, p);
        if (f == null) {
            return;
        }
        Path dir = allowedDirectory(f, s);
        if (dir == null) {
            p.add(at + ": " + path + " is outside storage.fileDirectories "
                + (s == null || s.fileDirectories == null ? "[]" : s.fileDirectories)
                + "; a pool's directory must lie in one of them");
            return;
        }
        Path link = linkBelow(f, dir);
        if (link != null) {
            p.add(at + ": " + link + " is a symbolic link; a pool's directory must not pass through one below " + dir);
        } else if (!Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)) {
            p.add(at + ": " + path + " is not a directory; nvmf4j creates no directories, make it first");
        }
    }

    /** Whether {@code file} (a bdev's path) lies in directory {@code dir} or below it; false for unparsable text. */
    static boolean inside(String file, String dir) {
        Path f = parse(file);
        Path d = parse(dir);
        return f != null && d != null && f.startsWith(d);
    }

    /**
     * Reports at {@code at} why an rbd bdev may not name {@code path} as its Ceph config or keyring: it must lie
     * under one of {@code storage.cephDirectories}, with no symbolic link from that directory down, and be a
     * regular file if it exists.
     */
    static void validateCephPath(String path, StorageConfig s, String at, List<String> p) {
        Path f = absolute(path, at, p);
        if (f == null) {
            return;
        }
        List<String> dirs = s == null ? new StorageConfig().cephDirectories : s.cephDirectories;
        Path dir = allowedDirectory(f, dirs);
        if (dir == null) {
            p.add(at + ": " + path + " is outside storage.cephDirectories " + dirs
                + "; an rbd bdev's Ceph config and keyring must lie in one of them");
            return;
        }
        Path link = linkBelow(f, dir);
        if (link != null) {
            p.add(at + ": " + link + " is a symbolic link; an rbd bdev's Ceph files must not pass through one below "
                + dir);
            return;
        }
        if (Files.exists(f, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
            p.add(at + ": " + path + " is not a regular file");
        }
    }

    /** The first symbolic link on the way from {@code dir} (excluded) down to {@code f}, or null. */
    private static Path linkBelow(Path f, Path dir) {
        for (Path q = f; q.startsWith(dir) && !q.equals(dir); q = q.getParent()) {
            if (Files.isSymbolicLink(q)) {
                return q;
            }
        }
        return null;
    }

    /** The allowed directory {@code f} lies strictly under, or null. */
    private static Path allowedDirectory(Path f, StorageConfig s) {
        return s == null ? null : allowedDirectory(f, s.fileDirectories);
    }

    /** The directory of {@code dirs} that {@code f} lies strictly under, or null. */
    private static Path allowedDirectory(Path f, List<String> dirs) {
        if (dirs == null) {
            return null;
        }
        for (String d : dirs) {
            Path dir = parse(d);
            if (dir != null && dir.isAbsolute() && f.startsWith(dir) && !f.equals(dir)) {
                return dir;
            }
        }
        return null;
    }

    /** The path if it is absolute and normalised, else reports why at {@code at} and returns null. */
    private static Path absolute(String text, String at, List<String> p) {
        Path f = parse(text);
        if (f == null || !f.isAbsolute() || !f.normalize().equals(f) || (text.endsWith("/") && text.length() > 1)) {
            p.add(at + ": must be an absolute path without '.', '..' or a trailing '/', got '" + text + "'");
            return null;
        }
        return f;
    }

    private static Path parse(String text) {
        if (text == null || text.isBlank() || text.indexOf('\0') >= 0) {
            return null;
        }
        try {
            return Path.of(text);
        } catch (InvalidPathException e) {
            return null;
        }
    }

    private static boolean isBlockDevice(Path f, boolean follow) {
        try {
            int mode = (Integer) (follow ? Files.getAttribute(f, "unix:mode")
                : Files.getAttribute(f, "unix:mode", LinkOption.NOFOLLOW_LINKS));
            return (mode & S_IFMT) == S_IFBLK;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }
}
