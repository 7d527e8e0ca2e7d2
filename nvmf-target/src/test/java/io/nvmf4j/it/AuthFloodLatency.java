package io.nvmf4j.it;

import io.nvmf4j.auth.DhGroup;
import io.nvmf4j.auth.DhchapKey;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.DhchapHost;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A benchmark line, not a test (no assertion; the normal suite does not run it): the p99 latency of a host doing 4 KiB
 * reads at queue depth 1 on a target with one poll group, alone and while another host, which knows an allowed host
 * NQN but not its key, loops DH-HMAC-CHAP Negotiate / Receive (Challenge) pairs with ffdhe8192 on the same poll group
 * (reconnecting when its controller is torn down after {@link io.nvmf4j.core.Controller#MAX_AUTH_RESTARTS} restarts).
 * With the DH key pairs generated off the poll-group thread the two figures stay close; with them on it, each
 * Challenge stalled the reads for the tens of milliseconds of an ffdhe8192 key pair.
 *
 * <p>{@code ./dev.sh authflood [seconds]} (default 10 per phase) prints one line:
 * <pre>auth flood: QD1 4k read p99 ... us alone, ... us beside ffdhe8192 Negotiate/Receive (... exchanges/s)</pre>
 */
public final class AuthFloodLatency {
    private AuthFloodLatency() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        Path dir = Files.createTempDirectory("nvmf4j-authflood");
        Path key = dir.resolve("host.key");
        Files.createFile(key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        Files.writeString(key, DhchapKey.format(1, secret) + "\n");
        try (TestTarget t = TestTarget.start(c -> {
            c.cores = 1; // one poll group: the reader and the flood share its thread
            c.authTimeoutMs = io.nvmf4j.config.TargetConfig.MAX_AUTH_TIMEOUT_MS;
            AuthTest.restricted(c).hostKeys.add(new HostKeyConfig(TestTarget.ALLOWED_HOSTNQN, key.toString(), null));
        }); NvmeController reader = t.controller(1, TcpHostOptions.DEFAULT)) {
            p99Micros(reader.io(0), 2); // warm-up
            double alone = p99Micros(reader.io(0), seconds);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong exchanges = new AtomicLong();
            Thread flood = new Thread(() -> flood(t.port, stop, exchanges), "auth-flood");
            flood.setDaemon(true);
            flood.start();
            long before = exchanges.get();
            long start = System.nanoTime();
            double beside = p99Micros(reader.io(0), seconds);
            double rate = (exchanges.get() - before) / ((System.nanoTime() - start) / 1e9);
            stop.set(true);
            flood.join(TimeUnit.SECONDS.toMillis(30));
            System.out.printf(Locale.ROOT, "auth flood: QD1 4k read p99 %.1f us alone, %.1f us beside ffdhe8192"
                + " Negotiate/Receive (%.1f exchanges/s)%n", alone, beside, rate);
        }
    }

    /** QD 1 reads of 4 KiB for {@code seconds}: the 99th percentile of their latencies in microseconds. */
    private static double p99Micros(NvmeHost q, int seconds) {
        long[] lat = new long[1 << 20];
        int n = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end && n < lat.length) {
            long s = System.nanoTime();
            Completion c = q.read(1, (n * 8L) % 65536, 8);
            lat[n++] = System.nanoTime() - s;
            if (!c.ok()) {
                throw new IllegalStateException("read failed: " + c);
            }
        }
        long[] sorted = Arrays.copyOf(lat, n);
        Arrays.sort(sorted);
        return sorted[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1000.0;
    }

    /** Connects as the allowed host and loops Negotiate / Receive with ffdhe8192 until its queue is closed. */
    private static void flood(int port, AtomicBoolean stop, AtomicLong exchanges) {
        int tid = 0;
        while (!stop.get()) {
            try (TcpHost tcp = TcpHost.connect(TestTarget.ADDRESS, port, TcpHostOptions.DEFAULT)) {
                NvmeHost admin = new NvmeHost(tcp, 512);
                admin.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, 0, TestTarget.ALLOWED_HOSTNQN,
                    TestTarget.RESTRICTED_NQN, NvmeController.hostIdFor(TestTarget.ALLOWED_HOSTNQN));
                while (!stop.get()) {
                    tid = (tid + 1) & 0xFFFF;
                    if (!DhchapHost.send(admin, DhchapHost.negotiate(tid, new int[]{1},
                        new int[]{DhGroup.FFDHE8192.id()})).ok()) {
                        break;
                    }
                    Completion challenge = DhchapHost.receive(admin, DhchapHost.AL);
                    if (!challenge.ok() || challenge.data()[1] != 1) {
                        break;
                    }
                    exchanges.incrementAndGet();
                }
            } catch (IOException | RuntimeException e) {
                // the target tore the controller down (restarts bounded): connect again
            }
        }
    }
}
