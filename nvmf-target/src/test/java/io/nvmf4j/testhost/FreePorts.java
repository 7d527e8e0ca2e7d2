package io.nvmf4j.testhost;

import io.nvmf4j.kernel.Sysctl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for a test to bind later, chosen so that nothing else takes them in between.
 *
 * <p>A port from {@code new ServerSocket(0)} lies in the kernel's ephemeral range
 * ({@code net.ipv4.ip_local_port_range}); once that socket is closed, any outgoing connection on the machine (a
 * test's own client, a Ceph daemon) may be given the same number as its source port before the test binds it, and
 * the bind fails with "Address already in use". The ports handed out here lie below that range, where the kernel
 * never assigns a port by itself: only another explicit bind of the same number can take one, and within this JVM
 * no port is handed out twice.
 */
public final class FreePorts {
    private static final int LOWEST = 10_000;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    /** A port that was free on every address when chosen, below the ephemeral range, not handed out before. */
    public static int pick() {
        int top = ephemeralLow() - 1;
        IOException last = null;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, top + 1);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(port));
                return port;
            } catch (IOException e) {
                last = e;
            }
        }
        throw new UncheckedIOException("no free port between " + LOWEST + " and " + top, last);
    }

    /** The first port of the kernel's ephemeral range (32768 where it cannot be read). */
    static int ephemeralLow() {
        try {
            String range = Sysctl.read(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
            int low = Integer.parseInt(range.split("\\s+")[0]);
            return low > LOWEST + 1_000 ? low : 32_768;
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
