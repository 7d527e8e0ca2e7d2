package io.nvmf4j.bdev;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real media with the properties a test needs, made with {@code mount} and {@code losetup} (root only):
 * a file system without hole punching (ramfs), and a loop device whose backing file sits on a tmpfs too
 * small for it, so that writeback to the device fails with EIO and {@code fdatasync} reports it (the only
 * way this kernel, which has no device-mapper, offers to make a real fsync fail). Everything is undone
 * by {@link #close()}, in reverse order.
 */
public final class ScratchMounts implements AutoCloseable {
    private final Path base;
    private final Deque<List<String>> undo = new ArrayDeque<>();

    public ScratchMounts(Path base) {
        this.base = base;
    }

    /** Skips the test where it cannot run (not root, or no mount/losetup); on the project's machines it runs. */
    public static void assumeRoot() {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "mounting scratch file systems and loop devices needs root");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/sbin/losetup")) || Files.isExecutable(Path.of("/usr/sbin/losetup")),
            "losetup(8) is missing");
    }

    /**
     * A fresh XFS of {@code bytes} made with {@code reflink=1} (what a reflink-dir pool needs) on a loop device over a
     * sparse image in the base directory, mounted; skips the test where mkfs.xfs is missing.
     */
    public Path xfs(long bytes) throws IOException, InterruptedException {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/sbin/mkfs.xfs")) || Files.isExecutable(Path.of("/usr/sbin/mkfs.xfs")),
            "mkfs.xfs(8) is missing (xfsprogs)");
        Path image = Files.createTempFile(base, "xfs-", ".img");
        run(List.of("truncate", "-s", Long.toString(bytes), image.toString()));
        run(List.of("mkfs.xfs", "-q", "-f", "-m", "reflink=1", image.toString()));
        Path dev = loop(image);
        Path dir = Files.createTempDirectory(base, "xfs-");
        run(List.of("mount", "-t", "xfs", dev.toString(), dir.toString()));
        undo.push(List.of("umount", dir.toString()));
        return dir;
    }

    /** A fresh mount of {@code type} ("tmpfs", "ramfs") with {@code options} (may be empty). */
    public Path mount(String type, String options) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(base, type + "-");
        List<String> cmd = new ArrayList<>(List.of("mount", "-t", type));
        if (!options.isEmpty()) {
            cmd.addAll(List.of("-o", options));
        }
        cmd.addAll(List.of(type, dir.toString()));
        run(cmd);
        undo.push(List.of("umount", dir.toString()));
        return dir;
    }

    /** A loop device over {@code backing}; returns its path ({@code /dev/loopN}). */
    Path loop(Path backing) throws IOException, InterruptedException {
        String dev = run(List.of("losetup", "--find", "--show", backing.toString())).trim();
        undo.push(List.of("losetup", "-d", dev));
        return Path.of(dev);
    }

    /**
     * A block device of {@code deviceBytes} whose medium holds only {@code mediumBytes}: writes beyond that
     * fail in writeback with EIO.
     */
    Path failingDisk(long deviceBytes, long mediumBytes) throws IOException, InterruptedException {
        Path tmpfs = mount("tmpfs", "size=" + mediumBytes);
        Path backing = tmpfs.resolve("medium.img");
        run(List.of("truncate", "-s", Long.toString(deviceBytes), backing.toString()));
        return loop(backing);
    }

    static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + ": timed out");
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + ": exit " + p.exitValue() + ": " + out.trim());
        }
        return out;
    }

    /**
     * Runs one undo step. An unmount is retried for up to 10 s while the file system is busy: a process that used
     * files there (a child service with an io_uring ring) may be reaped before the kernel's deferred ring teardown
     * has let go of them.
     */
    private static void undo(List<String> cmd) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                run(cmd);
                return;
            } catch (IOException e) {
                boolean busy = "umount".equals(cmd.get(0)) && String.valueOf(e.getMessage()).contains("target is busy");
                if (!busy || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50); // poll interval, bounded by the deadline
            }
        }
    }

    /** Undoes every mount and loop device made, in reverse order. */
    @Override
    public void close() throws IOException, InterruptedException {
        IOException first = null;
        while (!undo.isEmpty()) {
            try {
                undo(undo.pop());
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
