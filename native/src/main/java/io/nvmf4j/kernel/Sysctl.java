package io.nvmf4j.kernel;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a kernel setting under {@code /proc/sys} whole.
 *
 * <p>{@code Files.readString} and {@code Files.readAllBytes} cannot: a file under /proc reports size 0, so they read
 * one byte first and then the rest from offset 1; and the kernel's handlers of numeric settings
 * ({@code proc_dointvec} and its kin, {@code kernel/sysctl.c}) answer a read at any offset but 0 with end of file.
 * Those calls therefore return {@code "3"} for a {@code vm.nr_hugepages} of 320, or for the range
 * {@code "32768 60999"} of {@code net.ipv4.ip_local_port_range}. Here the first read asks for a whole buffer at
 * offset 0, which such a handler fills at once. Regular files (a test's tree standing for /proc) read the same.
 */
public final class Sysctl {
    /** More than any setting's text (the kernel formats at most a page). */
    private static final int BUFFER = 8192;

    private Sysctl() {
    }

    /** The file's text, stripped of the white space around it. */
    public static String read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[BUFFER];
            int n = 0;
            for (int r; n < buf.length && (r = in.read(buf, n, buf.length - n)) > 0; ) {
                n += r;
            }
            return new String(buf, 0, n, StandardCharsets.UTF_8).strip();
        }
    }

    /** The file's text as one number (vm.nr_hugepages). */
    public static long readLong(Path file) throws IOException {
        String s = read(file);
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IOException(file + ": not a number: '" + s + "'", e);
        }
    }
}
